/**
 * The Markdown of what oh-my-pi and rho write beside pi's kinds (see omp-entries.ts for the
 * page): omp's roles and entries, rho's loop notices and a user message's attachments. The
 * fencing and escaping are the document's own (`session-markdown.ts` hands its helpers in).
 */

type Json = Record<string, unknown>;

/** The document's helpers: session text fenced as a block (`output`, `prose`) or as a code span (`short`, `inlineCode`). */
export interface MarkdownTools {
  output(text: string, lang?: string): string;
  prose(text: string): string;
  /** One short piece of session text on a line, as a code span (cut at `max` characters). */
  short(value: string, max?: number): string;
  inlineCode(value: string): string;
}

const str = (value: unknown): string => (typeof value === "string" ? value : "");

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return Array.isArray(content)
    ? content
        .filter((p): p is Json => !!p && typeof p === "object" && (p as Json).type === "text")
        .map((p) => str(p.text))
        .join("\n\n")
    : "";
}

/** rho's notice kind of a `custom_message` type (`<namespace>.notice|error|aside`). */
function noticeOf(customType: unknown): string | undefined {
  const match = typeof customType === "string" ? /^[A-Za-z0-9_.-]{1,64}\.(notice|error|aside)$/.exec(customType) : null;
  return match
    ? { notice: "Notice", error: "Error", aside: "Aside" }[match[1] as "notice" | "error" | "aside"]
    : undefined;
}

/** A user message's attachments as a list (name, path, kind, type, what the host said); "" for none. */
export function attachmentsMarkdown(message: Json, md: MarkdownTools): string {
  const list = Array.isArray(message.attachments) ? (message.attachments as unknown[]) : [];
  const items = list
    .filter((a): a is Json => !!a && typeof a === "object")
    .slice(0, 50)
    .map((a) => {
      const facts = [str(a.kind), str(a.mimeType), str(a.about)].filter(Boolean).join(" · ");
      return `- ${md.short(str(a.name) || "a file", 120)}${str(a.path) ? ` ${md.inlineCode(str(a.path))}` : ""}${facts ? ` — ${md.short(facts, 200)}` : ""}`;
    });
  return items.length ? `**Attachments**\n\n${items.join("\n")}` : "";
}

/** omp's roles; undefined for others. */
export function ompMessageMarkdown(m: Json, at: string, md: MarkdownTools): string | undefined {
  switch (m.role) {
    case "developer":
      return `## Developer${at}\n\n${md.prose(textOf(m.content))}`;
    case "hookMessage":
      return m.display === false
        ? ""
        : `## ${md.short(str(m.customType) || "hook", 60)}${at}\n\n${md.prose(textOf(m.content))}`;
    case "pythonExecution": {
      const exit = typeof m.exitCode === "number" && m.exitCode !== 0 ? ` (exit ${m.exitCode})` : "";
      return `## Python${at}${exit}\n\n${md.output(str(m.code), "python")}\n\n${md.output(str(m.output))}`;
    }
    case "fileMention": {
      const files = Array.isArray(m.files) ? (m.files as unknown[]) : [];
      const items = files
        .filter((f): f is Json => !!f && typeof f === "object")
        .slice(0, 50)
        .map(
          (f) =>
            `- ${md.inlineCode(str(f.path) || "a file")}${str(f.skippedReason) ? ` (not read: ${md.short(str(f.skippedReason), 20)})` : ""}`,
        );
      return `## Files mentioned${at}\n\n${items.join("\n")}`;
    }
    default:
      return undefined;
  }
}

/** omp's entry kinds and rho's notices; undefined for others. */
export function ompEntryMarkdown(type: string, e: Json, at: string, md: MarkdownTools): string | undefined {
  switch (type) {
    case "custom_message": {
      const notice = noticeOf(e.customType);
      return notice && e.display !== false ? `**${notice}:**\n\n${md.prose(textOf(e.content))}` : undefined;
    }
    case "title_change":
      return `_Renamed: ${md.short(str(e.title), 200)}_`;
    case "reset_boundary":
      return `---\n\n_/clear: the conversation starts again here${at}_`;
    case "mode_change":
      return `_Mode: ${md.short(str(e.mode) || "none", 80)}_`;
    case "service_tier_change":
      return `_Service tier: ${md.short(e.serviceTier && typeof e.serviceTier === "object" ? JSON.stringify(e.serviceTier) : str(e.serviceTier) || "default", 120)}_`;
    case "ttsr_injection": {
      const rules = Array.isArray(e.injectedRules) ? e.injectedRules.map(str).filter(Boolean) : [];
      return `_Rules injected: ${md.short(rules.join(", ") || "none", 200)}_`;
    }
    case "credential_pin":
      // The pin's hash identifies an account: never written out.
      return `_Credential pinned for ${md.short(str(e.provider) || "a provider", 60)} (hidden)_`;
    case "session_init":
      return `## Session started${str(e.agent) ? ` as ${md.short(str(e.agent), 60)}` : ""}${at}\n\n${
        str(e.task) ? `${md.prose(str(e.task))}\n\n` : ""
      }**System prompt**\n\n${md.output(str(e.systemPrompt))}`;
    default:
      return undefined;
  }
}
