/**
 * What oh-my-pi and rho write beside pi's kinds, shown as such on the page: omp's message roles
 * (`developer`, `pythonExecution`, `hookMessage`, `fileMention`) and entries (`session_init`,
 * `mode_change`, `service_tier_change`, `reset_boundary` as a visible "/clear",
 * `ttsr_injection`, `credential_pin` with its hash never shown, `title_change`), rho's loop
 * notices (`custom_message` of type `<namespace>.notice`, `.error`, `.aside`) and the files a
 * user message carries (its `attachments`). Every string is session text: escaped here.
 */
import { escapeHtml } from "./escape.js";
import { renderCode, renderMarkdown } from "./markdown.js";
import { output } from "./tools/block.js";

type Json = Record<string, unknown>;

const str = (value: unknown): string => (typeof value === "string" ? value : "");

function oneLine(value: string, max = 120): string {
  const line = value.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function parts(content: unknown): Json[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? (content.filter((p) => p && typeof p === "object") as Json[]) : [];
}

const textOf = (content: unknown) =>
  parts(content)
    .filter((p) => p.type === "text")
    .map((p) => str(p.text))
    .join("\n\n");

/** rho's loop notice kind (`rho.error`, `operator.aside`: whatever the namespace); undefined for any other type. */
export function noticeKind(customType: unknown): "notice" | "error" | "aside" | undefined {
  const match = typeof customType === "string" ? /^[A-Za-z0-9_.-]{1,64}\.(notice|error|aside)$/.exec(customType) : null;
  return (match?.[1] as "notice" | "error" | "aside" | undefined) ?? undefined;
}

/** A rho loop notice: a line marked with its kind. */
export function noticeHtml(kind: "notice" | "error" | "aside", content: unknown): string {
  const label = { notice: "Notice", error: "Error", aside: "Aside" }[kind];
  return `<div class="notice notice-${kind}"><span class="who">${label}</span> ${renderMarkdown(textOf(content))}</div>`;
}

/** A user message's attachments (rho's `attachments`): name, kind, path and what the host said of it. */
export function attachmentsHtml(message: Json): string {
  const list = Array.isArray(message.attachments) ? (message.attachments as unknown[]) : [];
  const items = list
    .filter((a): a is Json => !!a && typeof a === "object")
    .slice(0, 50)
    .map((a) => {
      const facts = [str(a.kind), str(a.mimeType), str(a.about)]
        .filter(Boolean)
        .map((f) => escapeHtml(oneLine(f, 200)));
      return `<li><span class="attachment-name">${escapeHtml(oneLine(str(a.name) || "a file", 120))}</span>${
        str(a.path) ? ` <code>${escapeHtml(oneLine(str(a.path), 200))}</code>` : ""
      }${facts.length ? ` <span class="muted">${facts.join(" · ")}</span>` : ""}</li>`;
    });
  return items.length ? `<ul class="attachments" aria-label="Attachments">${items.join("")}</ul>` : "";
}

/** A text part that is an attachment's envelope (`<attachment …>`): shown folded, not as prose. */
export function isAttachmentText(part: Json): boolean {
  return part.type === "text" && /^\s*<attachment[\s>]/.test(str(part.text));
}

/** The envelope folded: its first line (name, type, path) in the summary, the text inside. */
export function attachmentTextHtml(part: Json): string {
  const body = str(part.text);
  const first = oneLine(body.split("\n")[0] ?? "", 160);
  return `<details class="attachment"><summary>Attachment <span class="muted">${escapeHtml(first)}</span></summary><div class="body">${output(body, { noun: "line" })}</div></details>`;
}

/** omp's message roles; undefined for a role this module does not hold. */
export function renderOmpMessage(message: Json, content: (content: unknown) => string): string | undefined {
  switch (message.role) {
    case "developer":
      return `<div class="who">Developer</div>${content(message.content)}`;
    case "hookMessage":
      return message.display === false
        ? undefined
        : `<div class="who">${escapeHtml(oneLine(str(message.customType) || "hook", 80))}</div>${content(message.content)}`;
    case "pythonExecution": {
      const exit = typeof message.exitCode === "number" ? ` <span class="muted">exit ${message.exitCode}</span>` : "";
      const marks = [message.cancelled === true ? "cancelled" : "", message.truncated === true ? "truncated" : ""]
        .filter(Boolean)
        .map((m) => `<span class="muted">${m}</span>`)
        .join(" ");
      return `<div class="who">Python <span class="muted">run by the user</span>${exit} ${marks}</div>${renderCode(str(message.code), "python")}${output(str(message.output))}`;
    }
    case "fileMention": {
      const files = Array.isArray(message.files) ? (message.files as unknown[]) : [];
      const items = files
        .filter((f): f is Json => !!f && typeof f === "object")
        .slice(0, 50)
        .map((f) => {
          const facts = [
            typeof f.lineCount === "number" ? `${f.lineCount} lines` : "",
            typeof f.byteSize === "number" ? `${f.byteSize} bytes` : "",
            str(f.skippedReason) ? `not read: ${str(f.skippedReason)}` : "",
          ].filter(Boolean);
          const name = `<code>${escapeHtml(oneLine(str(f.path) || "a file", 200))}</code>${facts.length ? ` <span class="muted">${escapeHtml(facts.join(" · "))}</span>` : ""}`;
          return str(f.content)
            ? `<li><details><summary>${name}</summary>${output(str(f.content), { noun: "line" })}</details></li>`
            : `<li>${name}</li>`;
        });
      return `<div class="who">Files mentioned</div><ul class="attachments">${items.join("")}</ul>`;
    }
    default:
      return undefined;
  }
}

/** omp's entry kinds: a line each (the system prompt of `session_init` folded); undefined for others. */
export function renderOmpEntry(e: Json, type: string): string | undefined {
  switch (type) {
    case "title_change":
      return `<p class="event">Renamed “${escapeHtml(oneLine(str(e.title), 200))}”</p>`;
    case "reset_boundary":
      return `<p class="event reset">/clear <span class="muted">— the conversation starts again here</span></p>`;
    case "mode_change":
      return `<p class="event">Mode → ${escapeHtml(oneLine(str(e.mode) || "none", 80))}</p>`;
    case "service_tier_change": {
      const tier =
        e.serviceTier && typeof e.serviceTier === "object"
          ? JSON.stringify(e.serviceTier)
          : str(e.serviceTier) || "default";
      return `<p class="event">Service tier → ${escapeHtml(oneLine(tier, 120))}</p>`;
    }
    case "ttsr_injection": {
      const rules = Array.isArray(e.injectedRules) ? e.injectedRules.map((r) => str(r)).filter(Boolean) : [];
      return `<p class="event">Rules injected: ${escapeHtml(oneLine(rules.join(", ") || "none", 200))}</p>`;
    }
    case "credential_pin":
      // The pin's hash identifies an account: never shown.
      return `<p class="event">Credential pinned for ${escapeHtml(oneLine(str(e.provider) || "a provider", 60))} <span class="muted">(hidden)</span></p>`;
    case "session_init": {
      const tools = Array.isArray(e.tools) ? e.tools.map((t) => str(t)).filter(Boolean) : [];
      const summary = `Session started${str(e.agent) ? ` as ${escapeHtml(oneLine(str(e.agent), 60))}` : ""}${
        tools.length
          ? ` <span class="muted">${tools.length} tools: ${escapeHtml(oneLine(tools.join(", "), 120))}</span>`
          : ""
      }`;
      const task = str(e.task) ? `<h4>Task</h4>${renderMarkdown(str(e.task))}` : "";
      return `<details class="system"><summary>${summary}</summary><div class="body">${task}<h4>System prompt</h4>${output(str(e.systemPrompt), { noun: "line" })}</div></details>`;
    }
    default:
      return undefined;
  }
}
