/**
 * The library's stylesheet and script, served at `LIBRARY_ASSETS` (the CSP allows no inline
 * code). The script only enhances pages that work without it: live search results as you type
 * (debounced, fetched as JSON, drawn with `textContent` only), copy buttons, local times.
 */

/** The library pages' stylesheet (the owner's session page loads it beside the viewer's). */
export const LIBRARY_CSS = `
body.library { color-scheme: light dark; --bg: #fff; --fg: #1d1f23; --muted: #6a6f78; --card: #f5f6f8; --line: #e1e4e8; --accent: #2f6feb; --danger: #c62828; --mark: #fff3a3; margin: 0 auto; max-width: 60rem; padding: 1rem; background: var(--bg); color: var(--fg); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
@media (prefers-color-scheme: dark) { body.library { --bg: #0f1115; --fg: #e6e8eb; --muted: #9aa1ab; --card: #181b21; --line: #2a2f37; --accent: #6ea1ff; --danger: #ff6b6b; --mark: #5c4a00; } }
body.library * { box-sizing: border-box; }
body.library a { color: var(--accent); }
body.library header { border-bottom: 1px solid var(--line); margin-bottom: 1rem; }
body.library h1 { font-size: 1.35rem; margin: .3rem 0 .5rem; }
.library-nav { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; }
.library-nav a { text-decoration: none; font-weight: 600; }
.library-nav a[aria-current="page"] { color: var(--fg); border-bottom: 2px solid var(--accent); }
.library-nav .sign-out { margin-left: auto; }
.device-flow .refused, .insights-refused { color: var(--danger); }
.device-request { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
.device-request dd { margin: 0; overflow-wrap: anywhere; }
.device-request .user-code { font-size: 1.4rem; letter-spacing: .12em; }
.device-decision { display: flex; gap: .8rem; }
.device-decision .approve { border-color: var(--accent); }
.minted-token { width: 100%; font-family: ui-monospace, monospace; }
details.rename summary { cursor: pointer; color: var(--muted); font-size: .85rem; }
.quick-ranges a[aria-current] { color: var(--fg); font-weight: 600; }
body.library input[type="submit"] { font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .3rem .5rem; }
body.library .muted, body.library time, .meta, .cwd, .kind { color: var(--muted); font-size: .85rem; }
body.library input, body.library select, body.library button { font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .3rem .5rem; max-width: 100%; }
body.library button, .library-bar button { cursor: pointer; background: var(--card); }
body.library button.danger, .library-bar .danger, body.library a.danger { color: var(--danger); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.filters .search input { width: 100%; font-size: 1.05rem; padding: .5rem .7rem; }
.filter-row { display: flex; flex-wrap: wrap; gap: .6rem; align-items: end; margin: .6rem 0 1rem; }
.filter-row label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); min-width: 0; }
.filter-row select { max-width: 16rem; }
ul.sessions { list-style: none; padding: 0; margin: 0; }
li.session { border-bottom: 1px solid var(--line); padding: .55rem 0; overflow-wrap: anywhere; }
li.session .title { font-weight: 600; text-decoration: none; }
li.session .meta { margin: .15rem 0 0; }
.meta time, table.shares time, .snippets time { white-space: nowrap; }
.hit { border: 1px solid var(--line); border-radius: 10px; padding: .5rem .8rem; margin: .6rem 0; background: var(--card); overflow-wrap: anywhere; }
.hit h2 { font-size: 1rem; margin: 0; }
.hit .cwd { margin: 0; }
ol.snippets { margin: .3rem 0 0; padding-left: 1.2rem; }
ol.snippets li { margin: .2rem 0; }
ol.snippets a { color: var(--fg); text-decoration: none; }
ol.snippets a:hover, ol.snippets a:focus { text-decoration: underline; }
mark { background: var(--mark); color: inherit; border-radius: 2px; }
.more { text-align: center; }
.empty { color: var(--muted); }
.notice-line { background: var(--card); border-left: 3px solid var(--accent); padding: .5rem .8rem; }
.notice-line.error { border-left-color: var(--danger); }
.table-wrap { overflow-x: auto; }
table.shares { border-collapse: collapse; width: 100%; font-size: .9rem; }
table.shares th, table.shares td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
table.shares tr.revoked, table.shares tr.expired { color: var(--muted); }
.status { font-size: .75rem; border-radius: 999px; padding: .05rem .5rem; border: 1px solid var(--line); white-space: nowrap; }
.status.active { background: var(--accent); color: var(--bg); border-color: var(--accent); }
.share-form { display: flex; flex-wrap: wrap; gap: .6rem; align-items: end; margin: .6rem 0 1rem; }
.share-form label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); }
.share-form label.check { flex-direction: row; gap: .3rem; align-items: center; }
.share-form select { max-width: 22rem; }
.new-share > summary { cursor: pointer; font-weight: 600; margin: .5rem 0; }
.created { border: 1px solid var(--accent); border-radius: 10px; padding: .4rem .9rem; margin: .6rem 0; }
.created h2 { font-size: 1rem; margin: .3rem 0; }
.copy-line { display: inline-flex; gap: .4rem; align-items: center; flex-wrap: wrap; max-width: 100%; }
.copy-line input { width: min(36rem, 100%); font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .85rem; }
.revoke-all { margin: 1rem 0; }
.confirm form { display: flex; flex-direction: column; gap: .6rem; align-items: flex-start; }
.confirm label { display: flex; flex-direction: column; gap: .3rem; }
.library-bar { display: flex; flex-wrap: wrap; gap: .4rem 1rem; align-items: center; margin: .4rem 0 .6rem; font-size: .9rem; }
.library-bar code { font-size: .8rem; background: var(--card); border: 1px solid var(--line); border-radius: 4px; padding: .05rem .35rem; overflow-wrap: anywhere; }
.library-bar button { font: inherit; font-size: .8rem; color: var(--fg); border: 1px solid var(--line); border-radius: 6px; padding: .1rem .5rem; }
.library-bar .danger { color: var(--error, #c62828); }
details.generations, details.files { font-size: .85rem; margin-bottom: .6rem; }
details.files ul { max-height: 16rem; overflow: auto; margin: .3rem 0; }
details.files code { overflow-wrap: anywhere; }
.insights-totals dl { display: flex; flex-wrap: wrap; gap: .6rem 1.6rem; margin: .4rem 0; }
.insights-totals dt { color: var(--muted); font-size: .8rem; }
.insights-totals dd { margin: 0; font-size: 1.4rem; font-variant-numeric: tabular-nums; }
.insights-part { margin: 1.4rem 0; }
.insights-pair { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1rem; align-items: start; }
svg.chart { width: 100%; height: auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
svg.chart text { fill: var(--muted); font: 11px system-ui, sans-serif; }
svg.chart text.value { fill: var(--fg); font-size: 10px; }
svg.chart text.axis-name { font-size: 12px; font-weight: 600; }
svg.chart .tick { stroke: var(--line); }
svg.chart .bar { fill: var(--accent); }
svg.chart .bar:hover { fill: var(--fg); }
svg.chart .axis { stroke: var(--muted); }
table.insights-table { border-collapse: collapse; width: 100%; font-size: .85rem; font-variant-numeric: tabular-nums; }
table.insights-table caption { text-align: left; color: var(--muted); font-size: .8rem; }
table.insights-table th, table.insights-table td { text-align: right; padding: .25rem .4rem; border-bottom: 1px solid var(--line); }
table.insights-table th[scope="row"], table.insights-table thead th:first-child { text-align: left; overflow-wrap: anywhere; }
/* The machine a branch tip came from (the owner's tree only): a chip that gives way before the preview does. */
.branches .device { display: inline-block; max-width: 14rem; vertical-align: middle; margin-left: .3rem; padding: 0 .45rem; line-height: 16px; font-size: .72rem; color: var(--fg); background: var(--card); border: 1px solid var(--muted); border-radius: 999px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.tree-row > .device { flex: 0 1 auto; min-width: 3rem; max-width: 35%; margin-left: .4rem; padding: 0 .45rem; line-height: 16px; font-size: .72rem; color: var(--fg); background: var(--card); border: 1px solid var(--muted); border-radius: 999px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
@media (max-width: 40rem) {
  body.library { padding: .6rem; font-size: 15px; }
  .tree-row > .device { max-width: 40%; }
  .filter-row label, .filter-row select, .share-form label, .share-form select { width: 100%; max-width: none; }
  table.shares thead { display: none; }
  table.shares tr { display: block; border-bottom: 1px solid var(--line); padding: .4rem 0; }
  table.shares td { display: inline-block; border: 0; padding: .1rem .4rem .1rem 0; }
  table.shares td:first-child { display: block; }
  .insights-pair { grid-template-columns: minmax(0, 1fr); }
}
@media print { .library-nav, .filters, .library-bar, .revoke-all, .new-share { display: none; } }
`;

/** The library pages' script (module; no inline code anywhere). */
export const LIBRARY_JS = `
const localTimes = (root) => {
  for (const t of root.querySelectorAll("time[datetime]")) {
    const d = new Date(t.getAttribute("datetime"));
    if (!isNaN(d.getTime())) t.title = d.toLocaleString() + " (your time)";
  }
};
localTimes(document);

// Copy buttons: the text to copy is in data-copy (escaped by the server).
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button[data-copy]") : null;
  if (!button) return;
  const text = button.getAttribute("data-copy") || "";
  const done = (ok) => {
    button.textContent = ok ? "Copied" : "Select and copy";
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  };
  if (navigator.clipboard) navigator.clipboard.writeText(text).then(() => done(true), () => done(false));
  else done(false);
});

// Live search: as you type (debounced), the results of the same query the form would submit.
const input = document.getElementById("library-q");
const live = document.getElementById("live-results");
const still = document.getElementById("static-results");
if (input && live && still) {
  const form = input.form;
  let timer = 0;
  let asked = 0;
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const hitHref = (sessionId, entryId) =>
    "/sessions/" + encodeURIComponent(sessionId) + "?targetId=" + encodeURIComponent(entryId) + "#e-" + encodeURIComponent(entryId);
  const draw = (page) => {
    live.replaceChildren();
    if (!page.sessions.length) live.append(el("p", "empty", "Nothing matches this search."));
    for (const s of page.sessions) {
      const article = el("article", "hit");
      const h2 = el("h2");
      const a = el("a", "", s.name || s.sessionId);
      a.href = "/sessions/" + encodeURIComponent(s.sessionId);
      h2.append(a);
      article.append(h2);
      if (s.cwd) article.append(el("p", "cwd", s.cwd));
      const ol = el("ol", "snippets");
      for (const e of s.entries) {
        const li = el("li");
        const link = el("a");
        link.href = hitHref(s.sessionId, e.entryId);
        for (const part of e.snippet) link.append(part.hit ? el("mark", "", part.text) : document.createTextNode(part.text));
        li.append(link, " ", el("span", "kind", e.kind));
        if (e.time) {
          const t = el("time", "", new Date(e.time).toISOString().slice(0, 16).replace("T", " ") + " UTC");
          t.setAttribute("datetime", new Date(e.time).toISOString());
          li.append(" ", t);
        }
        ol.append(li);
      }
      article.append(ol);
      live.append(article);
    }
    localTimes(live);
  };
  const run = async () => {
    const q = input.value.trim();
    const mine = ++asked;
    if (!q) {
      live.hidden = true;
      still.hidden = false;
      return;
    }
    const params = new URLSearchParams(new FormData(form));
    params.set("q", q);
    try {
      const r = await fetch(input.dataset.live + "?" + params, { headers: { Accept: "application/json" }, cache: "no-store" });
      if (mine !== asked) return;
      const body = await r.json();
      if (!r.ok) {
        live.replaceChildren(el("p", "notice-line error", body.error || "The search failed."));
      } else {
        draw(body);
      }
      live.hidden = false;
      still.hidden = true;
    } catch (e) {
      // Offline or the server is gone: the form still submits.
    }
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(run, 250);
  });
}
`;
