/**
 * The tool blocks' stylesheet, appended to the page's: it uses the page's colour variables
 * (--bg, --fg, --muted, --card, --line, --accent, --error) so light and dark follow
 * prefers-color-scheme; printing opens every collapsed output.
 */
export const TOOLS_CSS = `
.tool { --add: #e6ffec; --add-fg: #116329; --del: #ffebe9; --del-fg: #a40e26; --hunk: #ddf4ff; --term: #1e2127; --term-fg: #e6e8eb; --warn: #9a6700;
  border: 1px solid var(--line); border-left: 3px solid var(--accent); border-radius: 8px; margin: .5rem 0; padding: .4rem .6rem; background: var(--bg); overflow-wrap: anywhere; }
@media (prefers-color-scheme: dark) { .tool { --add: #12361f; --add-fg: #7ee787; --del: #3d1418; --del-fg: #ffa198; --hunk: #14283d; --term: #0a0c10; --warn: #d29922; } }
.tool.failed { border-left-color: var(--error); }
.tool-head { display: flex; flex-wrap: wrap; gap: .35rem; align-items: baseline; font-size: .9rem; }
.tool-name { font-weight: 600; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.tool-path, .tool .pattern { font-size: .85rem; background: var(--card); border-radius: 4px; padding: 0 .3rem; overflow-wrap: anywhere; }
.tool-meta { color: var(--muted); font-size: .8rem; }
.tool .mark { font-size: .75rem; border-radius: 999px; padding: 0 .45rem; border: 1px solid currentColor; overflow-wrap: anywhere; }
.tool .mark.err { color: var(--error); }
.tool .mark.ok { color: var(--add-fg); }
.tool .mark.warn { color: var(--warn); }
.tool .mark.missing, .tool .mark.info { color: var(--muted); }
.tool .marks { display: flex; flex-wrap: wrap; gap: .35rem; margin: .3rem 0 .1rem; }
.tool .output { margin-top: .35rem; }
.tool .output pre { margin: 0; max-height: 32rem; overflow: auto; }
.tool .output summary { color: var(--muted); font-size: .8rem; margin: .25rem 0; }
.tool .output.long:has(> details[open]) > .preview { display: none; }
.tool .preview .more { color: var(--muted); font-size: .75rem; padding: .1rem .2rem; }
.tool .none { margin: .2rem 0; font-size: .85rem; }
.tool .error-text pre { color: var(--error); white-space: pre-wrap; }
.tool .command { display: flex; gap: .4rem; align-items: flex-start; margin-top: .35rem; }
.tool .command .prompt { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; color: var(--accent); font-weight: 700; padding-top: .6rem; }
.tool .command pre { flex: 1; margin: 0; }
.tool .terminal pre { background: var(--term); color: var(--term-fg); border-color: var(--term); }
.tool .terminal .preview .more { color: #9aa1ab; }
.tool pre.diff { padding: .3rem 0; }
.tool pre.diff code { display: block; min-width: max-content; }
.tool .dl { display: block; padding-right: .6rem; white-space: pre; }
.tool .dl.add { background: var(--add); }
.tool .dl.del { background: var(--del); }
.tool .dl.hunk, .tool .dl.skip { background: var(--hunk); color: var(--muted); padding-left: .6rem; }
.tool .dl.meta { color: var(--muted); padding-left: .6rem; }
.tool .dl .ln { display: inline-block; width: 3.2em; text-align: right; color: var(--muted); padding-right: .5em; user-select: none; }
.tool .dl .sg { display: inline-block; width: 1.4em; text-align: center; user-select: none; }
.tool .dl.add .sg { color: var(--add-fg); }
.tool .dl.del .sg { color: var(--del-fg); }
.tool .stat { font-size: .8rem; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; margin-right: .3rem; }
.tool .stat .plus { color: var(--add-fg); }
.tool .stat .minus { color: var(--del-fg); }
.tool ul.items { list-style: none; margin: 0; padding: .3rem .5rem; border: 1px solid var(--line); border-radius: 6px; max-height: 32rem; overflow: auto; font-size: .85rem; }
.tool ul.items li { display: flex; gap: .5rem; align-items: baseline; padding: .05rem 0; }
.tool ul.items li .tool-path { background: none; padding: 0; }
.tool ul.items li.dir .tool-path { font-weight: 600; color: var(--accent); }
.tool ul.items li.context { color: var(--muted); }
.tool ul.items li .ln { color: var(--muted); font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.tool ul.items li .text { white-space: pre-wrap; }
.tool ul.items li.err { color: var(--error); }
.tool ul.items li.more { color: var(--muted); }
.tool .images { display: flex; flex-wrap: wrap; gap: .4rem; }
.tool img.tool-image { max-width: 100%; max-height: 24rem; height: auto; border: 1px solid var(--line); border-radius: 6px; }
@media (max-width: 600px) { .tool { padding: .35rem .4rem; } .tool .dl .ln { width: 2.4em; } }
@media print {
  .tool { break-inside: avoid-page; border-left-width: 2px; }
  .tool .output details > *, .tool .output details::details-content { display: block; content-visibility: visible; }
  .tool .output.long > .preview { display: none; }
  .tool .output pre, .tool ul.items { max-height: none; overflow: visible; white-space: pre-wrap; }
  .tool .dl { white-space: pre-wrap; }
}
`;
