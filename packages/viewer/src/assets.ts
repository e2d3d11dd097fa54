/** The page's only stylesheet and script, served from /s/assets/ (the CSP allows no inline code). */
import { APP_JS } from "./client.js";
import { TOOLS_CSS } from "./tools/index.js";

export { APP_JS };

const PAGE_CSS = `
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
.entry-head { float: right; display: flex; gap: .4rem; align-items: center; margin-left: .5rem; max-width: 50%; }
.label { font-size: .75rem; background: var(--accent); color: var(--bg); border-radius: 4px; padding: 0 .4rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 16rem; }
.permalink, .edited { font-size: .75rem; color: var(--muted); text-decoration: none; }
.permalink:hover, .permalink:focus { color: var(--accent); }
.edited { color: var(--error); }
.entry.target, .entry.focused, .paired-result.target { outline: 2px solid var(--accent); outline-offset: 2px; }
.paired-result { overflow-wrap: anywhere; }
.paired-result > .entry-head { margin-top: .2rem; }
.notice-line { background: var(--card); border-left: 3px solid var(--accent); padding: .5rem .8rem; }
.facts .cwd { white-space: normal; overflow-wrap: anywhere; }
.tip-time { white-space: nowrap; }
body.tool-output-hidden .tool .output { display: none; }
details.system .body, dl.tools { font-size: .85rem; }
dl.tools dt { margin-top: .3rem; }
dl.tools dd { margin-left: 1rem; color: var(--muted); }
.event { color: var(--muted); font-size: .85rem; margin: 0; }
.event.reset { font-weight: 600; border-top: 1px dashed var(--muted); padding-top: .3rem; }
.notice { border-left: 3px solid var(--muted); padding-left: .6rem; font-size: .9rem; }
.notice .who { display: inline; }
.notice-error { border-left-color: #c0392b; }
.notice-aside { font-style: italic; }
.attachments { margin: .3rem 0; padding-left: 1.2rem; font-size: .9rem; }
.entry.model_change, .entry.thinking_level_change, .entry.session_info { background: transparent; border-style: dashed; padding: .3rem .9rem; }
details > summary { cursor: pointer; overflow-wrap: anywhere; }
details .body { margin-top: .4rem; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: .6rem; overflow-x: auto; font-size: .85rem; line-height: 1.4; max-height: 40rem; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
img.shot { max-width: 100%; height: auto; border-radius: 6px; border: 1px solid var(--line); }
.error { color: var(--error); }
.branches ul { padding-left: 1.2rem; }
.branches li.current { font-weight: 600; }
.more { text-align: center; }
#entries { overflow-anchor: none; }
body.with-tree { max-width: 90rem; }
.layout { display: block; }
body.with-tree .layout { display: grid; grid-template-columns: minmax(16rem, 26rem) minmax(0, 1fr); gap: 1.2rem; align-items: start; }
#tree-pane { position: sticky; top: 0; max-height: 100vh; overflow: hidden; display: flex; flex-direction: column; font-size: .85rem; }
.tree-fold { display: none; }
body.js .tree-fold { display: block; }
body.js .tree-fold > summary { font-weight: 600; }
.tree-controls input { width: 100%; font: inherit; padding: .3rem .5rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); margin: .4rem 0; }
.tree-filters { display: flex; flex-wrap: wrap; gap: .25rem; }
.tree-filters button { font: inherit; font-size: .8rem; padding: .1rem .5rem; border: 1px solid var(--line); border-radius: 999px; background: var(--card); color: var(--fg); cursor: pointer; }
.tree-filters button[aria-pressed="true"] { background: var(--accent); color: var(--bg); border-color: var(--accent); }
.tree-status { margin: .3rem 0; }
.tree-viewport { position: relative; height: 70vh; overflow: auto; border: 1px solid var(--line); border-radius: 6px; }
.tree-spacer { width: 1px; }
.tree-row { position: absolute; left: 0; right: 0; height: 22px; line-height: 22px; padding: 0 .4rem; white-space: nowrap; overflow: hidden; color: var(--fg); text-decoration: none; font-size: .8rem; display: flex; align-items: center; }
.tree-row > span { flex: none; }
.tree-row > .tree-text { flex: 1 1 auto; min-width: 2rem; overflow: hidden; text-overflow: ellipsis; }
.tree-row:hover, .tree-row:focus { background: var(--card); }
.tree-row.on-path { background: var(--user); }
.tree-row.current { font-weight: 700; box-shadow: inset 3px 0 var(--accent); }
.tree-prefix { font-family: ui-monospace, Menlo, Consolas, monospace; color: var(--muted); white-space: pre; }
.tree-role { color: var(--muted); margin-right: .35rem; font-size: .72rem; }
.tree-row.k-u .tree-role { color: var(--accent); }
/* A chip keeps its word: the preview beside it gives way (a long label is cut with an ellipsis, never to an empty box). */
.tree-row > .label { flex: none; max-width: 45%; margin-left: .4rem; line-height: 18px; }
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
@media (max-width: 60rem) {
  body.with-tree .layout { display: block; }
  #tree-pane { position: static; max-height: none; }
  .tree-viewport { height: 60vh; }
}
@media (max-width: 40rem) { .keys { display: none; } body { padding: .6rem; font-size: 15px; } .entry { padding: .5rem .65rem; } .entry-head { max-width: 60%; } }
@media print {
  :root { --bg: #fff; --fg: #000; --card: #fff; --user: #f4f6fa; --line: #bbb; --muted: #444; }
  body, body.with-tree { max-width: none; padding: 0; font-size: 11pt; }
  body.with-tree .layout { display: block; }
  #tree-pane, .permalink, .more, .keys, footer { display: none; }
  .entry { break-inside: avoid-page; border-color: #bbb; }
  pre { max-height: none; white-space: pre-wrap; }
  a { color: inherit; }
}
`;

/** The stylesheet: the page's own, then the tool blocks'. */
export const STYLE_CSS = PAGE_CSS + TOOLS_CSS;
