/** The page's only stylesheet and script, served from /s/assets/ (the CSP allows no inline code). */

export const STYLE_CSS = `
:root { color-scheme: light dark; --bg: #fff; --fg: #1d1f23; --muted: #6a6f78; --card: #f5f6f8; --line: #e1e4e8; --accent: #2f6feb; --user: #eef4ff; --error: #c62828; }
@media (prefers-color-scheme: dark) { :root { --bg: #0f1115; --fg: #e6e8eb; --muted: #9aa1ab; --card: #181b21; --line: #2a2f37; --accent: #6ea1ff; --user: #152036; --error: #ff6b6b; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 52rem; padding: 1rem; background: var(--bg); color: var(--fg); font: 16px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; }
header { border-bottom: 1px solid var(--line); margin-bottom: 1rem; }
h1 { font-size: 1.35rem; margin: .2rem 0 .4rem; overflow-wrap: anywhere; }
.facts, .notes, .muted, time { color: var(--muted); font-size: .85rem; }
.facts span { white-space: nowrap; }
a { color: var(--accent); }
.entry { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: .6rem .9rem; margin: .7rem 0; overflow-wrap: anywhere; position: relative; }
.entry.user { background: var(--user); }
.entry time { display: block; text-align: right; font-size: .75rem; }
.who { font-weight: 600; font-size: .85rem; color: var(--muted); }
.model { font-weight: 400; margin-left: .4rem; }
.label { position: absolute; top: .5rem; right: .7rem; font-size: .75rem; background: var(--accent); color: var(--bg); border-radius: 4px; padding: 0 .4rem; }
.event { color: var(--muted); font-size: .85rem; margin: 0; }
.entry.model_change, .entry.thinking_level_change, .entry.session_info { background: transparent; border-style: dashed; padding: .3rem .9rem; }
details > summary { cursor: pointer; overflow-wrap: anywhere; }
details .body { margin-top: .4rem; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .6rem; overflow-x: auto; font-size: .85rem; line-height: 1.4; max-height: 40rem; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
img.shot { max-width: 100%; height: auto; border-radius: 6px; border: 1px solid var(--line); }
.error { color: var(--error); }
.branches ul { padding-left: 1.2rem; }
.branches li.current { font-weight: 600; }
.earlier { text-align: center; }
.hljs-keyword, .hljs-selector-tag, .hljs-built_in { color: #cf222e; }
.hljs-string, .hljs-attr { color: #0a3069; }
.hljs-number, .hljs-literal { color: #0550ae; }
.hljs-comment { color: var(--muted); font-style: italic; }
.hljs-title, .hljs-function { color: #8250df; }
@media (prefers-color-scheme: dark) {
  .hljs-keyword, .hljs-selector-tag, .hljs-built_in { color: #ff7b72; }
  .hljs-string, .hljs-attr { color: #a5d6ff; }
  .hljs-number, .hljs-literal { color: #79c0ff; }
  .hljs-title, .hljs-function { color: #d2a8ff; }
}
@media (max-width: 40rem) { body { padding: .6rem; font-size: 15px; } .entry { padding: .5rem .65rem; } }
`;

/**
 * Live updates without inline code: a live share polls its state with an ETag and appends the
 * entries that arrived (server-rendered, already escaped, from this same origin).
 */
export const APP_JS = `
(() => {
  const body = document.body;
  if (body.dataset.live !== "1") return;
  const base = body.dataset.base;
  const status = document.getElementById("live-status");
  let etag = null;
  const lastId = () => {
    const entries = document.querySelectorAll("#entries .entry");
    return entries.length ? entries[entries.length - 1].dataset.id : "";
  };
  async function poll() {
    try {
      const r = await fetch(base + "/state", { headers: etag ? { "If-None-Match": etag } : {}, cache: "no-store" });
      if (r.status === 200) {
        const fresh = r.headers.get("ETag");
        if (etag !== null && fresh !== etag) {
          const f = await fetch(base + "/entries?after=" + encodeURIComponent(lastId()), { cache: "no-store" });
          if (f.ok) {
            const doc = new DOMParser().parseFromString(await f.text(), "text/html");
            const main = document.getElementById("entries");
            for (const node of Array.from(doc.body.children)) main.appendChild(document.adoptNode(node));
            status.textContent = "updated " + new Date().toLocaleTimeString();
          }
        }
        etag = fresh;
      }
    } catch (e) {
      status.textContent = "offline; retrying";
    }
    setTimeout(poll, 3000);
  }
  poll();
})();
`;
