/**
 * The page's only script, served from /s/assets/app.js (the CSP allows no inline code). It
 * enhances a page that already reads well without it: the tree navigator (a virtual list over
 * the compact tree, so 20,000 entries cost as much as the rows on screen), earlier and later
 * windows loaded in place, permalinks, keys, local times, printing and live updates. Session
 * text only ever reaches the page as `textContent` or as server-rendered (escaped) HTML from
 * this same origin.
 */
export const APP_JS = `
(() => {
  "use strict";
  const body = document.body;
  const base = body.dataset.base;
  if (!base) return;
  body.classList.add("js");
  // The branch shown: a live page's moves to the tip of what arrives.
  let leaf = body.dataset.leaf || "";
  const main = document.getElementById("entries");
  const WINDOW = 150;

  // Local times on hover: the page shows UTC; the reader's own clock is one hover away.
  function localTimes(root) {
    for (const t of root.querySelectorAll("time[datetime]")) {
      const d = new Date(t.getAttribute("datetime"));
      if (!isNaN(d.getTime())) t.title = d.toLocaleString() + " (your time)";
    }
  }
  localTimes(document);

  // Permalinks: "#" copies a link that opens this branch at this entry.
  const linkTo = (id) => location.origin + base + "?" + (leaf ? "leaf=" + encodeURIComponent(leaf) + "&" : "") +
    "targetId=" + encodeURIComponent(id) + "#e-" + encodeURIComponent(id);
  document.addEventListener("click", (event) => {
    const a = event.target instanceof Element ? event.target.closest("a.permalink") : null;
    if (!a) return;
    const entry = a.closest(".entry");
    if (!entry) return;
    event.preventDefault();
    const url = linkTo(entry.dataset.id);
    history.replaceState(null, "", url);
    const done = () => { a.textContent = "copied"; setTimeout(() => { a.textContent = "#"; }, 1500); };
    if (navigator.clipboard) navigator.clipboard.writeText(url).then(done, done); else done();
  });
  // Old links (#e-<id>) and pi-style ones (#<id>) both land on the entry.
  function landOnHash() {
    let raw = "";
    try { raw = decodeURIComponent(location.hash.slice(1)); } catch (e) { return; }
    if (!raw) return;
    const el = document.getElementById("e-" + raw) || (raw.startsWith("e-") ? document.getElementById(raw) : null);
    // An entry, or a tool result's anchor on the block it is shown in (with its call).
    if (el && (el.classList.contains("entry") || el.classList.contains("paired-result"))) {
      el.classList.add("target");
      el.scrollIntoView({ block: "start" });
      return;
    }
    // An entry outside the window shown: ask the server for the window that holds it (once).
    const query = new URLSearchParams(location.search);
    if (document.getElementById(raw) || query.has("targetId") || query.has("target")) return;
    const id = raw.startsWith("e-") ? raw.slice(2) : raw;
    location.replace(base + "?" + (leaf && query.has("leaf") ? "leaf=" + encodeURIComponent(leaf) + "&" : "") + "targetId=" + encodeURIComponent(id) + "#e-" + encodeURIComponent(id));
  }
  landOnHash();

  // Earlier and later windows, loaded in place; the reader's place on the page stays put.
  async function loadWindow(a, earlier) {
    const q = new URLSearchParams();
    if (leaf) q.set("leaf", leaf);
    if (earlier) q.set("before", a.dataset.before); else q.set("from", a.dataset.from);
    const r = await fetch(base + "/entries?" + q, { cache: "no-store" });
    if (!r.ok) { location.href = a.href; return; }
    const doc = new DOMParser().parseFromString(await r.text(), "text/html");
    const nodes = Array.from(doc.body.children).map((n) => document.adoptNode(n));
    const holder = a.closest(".more");
    const anchor = earlier ? holder.nextElementSibling : holder;
    // What the reader looks at stays where it is on screen (the page keeps it, not the browser's anchoring).
    const pinned = earlier ? anchor : null;
    const top = pinned ? pinned.getBoundingClientRect().top : 0;
    for (const n of nodes) main.insertBefore(n, anchor);
    for (const n of nodes) localTimes(n);
    const total = Number(body.dataset.total);
    if (earlier) {
      const start = Math.max(0, Number(a.dataset.before) - WINDOW);
      body.dataset.start = String(start);
      if (start === 0) holder.remove(); else { a.dataset.before = String(start); a.textContent = "Show " + start + " earlier entr" + (start === 1 ? "y" : "ies"); }
    } else {
      const end = Math.min(total, Number(a.dataset.from) + WINDOW);
      body.dataset.end = String(end);
      if (end >= total) holder.remove(); else { a.dataset.from = String(end); a.textContent = "Show " + (total - end) + " later entr" + (total - end === 1 ? "y" : "ies"); }
    }
    if (pinned) window.scrollBy(0, pinned.getBoundingClientRect().top - top);
  }
  main.addEventListener("click", (event) => {
    const a = event.target instanceof Element ? event.target.closest(".more a") : null;
    if (!a) return;
    event.preventDefault();
    loadWindow(a, a.closest(".earlier") !== null).catch(() => { location.href = a.href; });
  });

  // Keys: T thinking, O tool output, / search, j/k next/previous user message.
  let thinkingOpen = false;
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const t = event.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || (t instanceof HTMLElement && t.isContentEditable)) {
      if (event.key === "Escape" && t instanceof HTMLElement) t.blur();
      return;
    }
    const key = event.key;
    if (key === "t" || key === "T") {
      thinkingOpen = !thinkingOpen;
      for (const d of document.querySelectorAll("details.thinking")) d.open = thinkingOpen;
    } else if (key === "o" || key === "O") {
      body.classList.toggle("tool-output-hidden");
    } else if (key === "/") {
      const search = document.getElementById("tree-search");
      if (!search) return;
      event.preventDefault();
      const fold = search.closest("details");
      if (fold) fold.open = true;
      search.focus();
    } else if (key === "j" || key === "k") {
      const users = Array.from(document.querySelectorAll("#entries .entry.user"));
      const next = key === "j"
        ? users.find((u) => u.getBoundingClientRect().top > 2)
        : users.filter((u) => u.getBoundingClientRect().top < -2).pop();
      if (!next) return;
      for (const u of document.querySelectorAll(".entry.focused")) u.classList.remove("focused");
      next.classList.add("focused");
      next.scrollIntoView({ block: "start" });
    } else return;
    event.preventDefault();
  });

  // Printing: every collapsed block opens, as a reader of the PDF cannot click.
  window.addEventListener("beforeprint", () => { for (const d of document.querySelectorAll("main details")) d.open = true; });

  // The tree navigator: a virtual list over the compact tree.
  // What the tree drawn last keeps across a rebuild (a live page's): its search, filter and scroll.
  let treeKept = null;
  let redraw = null;
  window.addEventListener("resize", () => { if (redraw) redraw(); });
  const treeRoot = document.getElementById("tree");
  if (treeRoot) buildTree(treeRoot).catch(() => { treeRoot.textContent = "The tree could not be loaded."; });

  async function buildTree(root, again) {
    // The same request as the page's preload (it is already on its way): one tree per version of
    // the session, whatever the branch shown; the shown leaf is found here. A rebuild asks afresh.
    const r = await fetch(base + "/tree", again ? { cache: "no-store" } : {});
    if (!r.ok) throw new Error("tree");
    const tree = await r.json();
    body.dataset.treeLoaded = String(Math.round(performance.now()));
    const n = tree.ids.length;
    if (leaf) tree.leaf = tree.ids.indexOf(leaf);
    const children = new Array(n);
    const roots = [];
    for (let i = 0; i < n; i++) {
      const p = tree.parents[i];
      if (p < 0) roots.push(i); else (children[p] || (children[p] = [])).push(i);
    }
    // Pre-order, with pi's connectors where the tree branches; a chain stays at one indent.
    const order = new Int32Array(n);
    const prefix = new Array(n);
    let count = 0;
    const stack = [];
    for (let i = roots.length - 1; i >= 0; i--) stack.push([roots[i], roots.length > 1 ? (i === roots.length - 1 ? "└─ " : "├─ ") : "", roots.length > 1 ? (i === roots.length - 1 ? "   " : "│  ") : ""]);
    while (stack.length) {
      const [i, own, inherited] = stack.pop();
      order[count++] = i;
      prefix[i] = own;
      const kids = children[i];
      if (!kids) continue;
      if (kids.length === 1) { stack.push([kids[0], inherited, inherited]); continue; }
      const indent = inherited.length > 48 ? inherited.slice(0, 45) + "…  " : inherited;
      for (let k = kids.length - 1; k >= 0; k--) {
        const last = k === kids.length - 1;
        stack.push([kids[k], indent + (last ? "└─ " : "├─ "), indent + (last ? "   " : "│  ")]);
      }
    }
    const onPath = new Uint8Array(n);
    for (let i = tree.leaf; i >= 0; i = tree.parents[i]) { if (onPath[i]) break; onPath[i] = 1; }
    // The machine each branch tip came from (the owner's own page only, when several wrote it).
    const deviceOf = new Map(tree.devices || []);
    // What search looks in: made at the first search, not before the tree is drawn.
    let lower = null;
    const searchable = () => lower || (lower = tree.previews.map((p, i) => (p + " " + (tree.labels[i] || "") + " " + (deviceOf.get(i) || "")).toLowerCase()));
    const ROLE = { u: "user", a: "assistant", t: "tool", b: "bash", s: "system", c: "summary", m: "custom", l: "label", i: "name", e: "edit", o: "entry" };

    // Read before the old tree goes (a removed list scrolls nowhere).
    const kept = again && treeKept ? { q: treeKept.q, filter: treeKept.filter, scrollTop: treeKept.scrollTop } : null;
    root.innerHTML = "";
    const controls = document.createElement("div");
    controls.className = "tree-controls";
    const search = document.createElement("input");
    search.type = "search";
    search.id = "tree-search";
    search.placeholder = "Search the tree (/)";
    search.setAttribute("aria-label", "Search the tree");
    controls.appendChild(search);
    const filters = document.createElement("div");
    filters.className = "tree-filters";
    const FILTERS = [["default", "Default"], ["no-tools", "No-tools"], ["user", "User"], ["labeled", "Labeled"], ["all", "All"]];
    let filter = kept ? kept.filter : "default";
    if (kept) search.value = kept.q;
    for (const [value, text] of FILTERS) {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.filter = value;
      b.textContent = text;
      b.setAttribute("aria-pressed", value === filter ? "true" : "false");
      b.addEventListener("click", () => {
        filter = value;
        for (const other of filters.children) other.setAttribute("aria-pressed", other === b ? "true" : "false");
        refresh(true);
      });
      filters.appendChild(b);
    }
    controls.appendChild(filters);
    const status = document.createElement("p");
    status.className = "tree-status muted";
    controls.appendChild(status);
    root.appendChild(controls);
    const viewport = document.createElement("div");
    viewport.className = "tree-viewport";
    viewport.setAttribute("role", "list");
    const spacer = document.createElement("div");
    spacer.className = "tree-spacer";
    viewport.appendChild(spacer);
    root.appendChild(viewport);

    const ROW = 22;
    let rows = order.subarray(0, count);
    let flat = false;
    const keep = (i) => {
      const k = tree.kinds[i];
      if (filter === "all") return true;
      if (filter === "user") return k === "u";
      if (filter === "labeled") return tree.labels[i] !== null;
      if (k === "l" || k === "o" || k === "i") return false;
      if (filter === "no-tools") return k !== "t" && k !== "b" && !(k === "a" && tree.previews[i].startsWith("→ "));
      return true;
    };
    // The full text of every entry is searched on the server (masked as the page is), a page of
    // matches at a time: the previews and labels here answer at once, the server's matches join them.
    let found = null;
    let foundFor = "";
    let searching = false;
    async function searchServer(q) {
      foundFor = q;
      found = new Uint8Array(n);
      searching = true;
      let from = 0;
      try {
        for (;;) {
          const r = await fetch(base + "/find?q=" + encodeURIComponent(q) + (from ? "&from=" + from : ""));
          if (foundFor !== q) return;
          if (!r.ok) break;
          const page = await r.json();
          for (const i of page.matches) if (i >= 0 && i < n) found[i] = 1;
          refresh(true);
          if (typeof page.next !== "number" || page.next <= from) break;
          from = page.next;
        }
      } catch (e) {
        // Offline: the previews' matches stay.
      }
      if (foundFor !== q) return;
      searching = false;
      refresh(true);
    }
    function refresh(fromServer) {
      const q = search.value.trim().toLowerCase().slice(0, 200);
      if (q && !fromServer && q !== foundFor) searchServer(q);
      if (!q) { foundFor = ""; found = null; searching = false; }
      const texts = q ? searchable() : null;
      const server = q && foundFor === q ? found : null;
      const out = [];
      for (let j = 0; j < count; j++) {
        const i = order[j];
        if (keep(i) && (!q || texts[i].includes(q) || (server && server[i]))) out.push(i);
      }
      rows = out;
      flat = q !== "" || filter === "user" || filter === "labeled";
      spacer.style.height = rows.length * ROW + "px";
      status.textContent = rows.length.toLocaleString() + " of " + n.toLocaleString() + " entries" + (q ? " match" + (searching ? " (searching the full text…)" : "") : "");
      status.dataset.searching = q && searching ? "1" : "0";
      status.dataset.query = q;
      drawn = "";
      draw();
    }
    let drawn = "";
    function draw() {
      const first = Math.max(0, Math.floor(viewport.scrollTop / ROW) - 10);
      const last = Math.min(rows.length, Math.ceil((viewport.scrollTop + viewport.clientHeight) / ROW) + 10);
      const key = first + ":" + last + ":" + rows.length;
      if (key === drawn) return;
      drawn = key;
      const frag = document.createDocumentFragment();
      for (let j = first; j < last; j++) {
        const i = rows[j];
        const a = document.createElement("a");
        a.className = "tree-row k-" + tree.kinds[i] + (onPath[i] ? " on-path" : "") + (i === tree.leaf ? " current" : "");
        a.setAttribute("role", "listitem");
        a.style.top = j * ROW + "px";
        a.href = base + "?leaf=" + encodeURIComponent(tree.ids[i]) + "#e-" + encodeURIComponent(tree.ids[i]);
        a.dataset.id = tree.ids[i];
        const pre = document.createElement("span");
        pre.className = "tree-prefix";
        pre.textContent = flat ? "" : prefix[i];
        const role = document.createElement("span");
        role.className = "tree-role";
        role.textContent = ROLE[tree.kinds[i]] || "entry";
        const text = document.createElement("span");
        text.className = "tree-text";
        text.textContent = tree.previews[i] || "(" + (ROLE[tree.kinds[i]] || "entry") + ")";
        a.append(pre, role, text);
        if (tree.labels[i] !== null) {
          const label = document.createElement("span");
          label.className = "label";
          label.textContent = tree.labels[i];
          a.appendChild(label);
        }
        const device = deviceOf.get(i);
        if (device !== undefined) {
          const chip = document.createElement("span");
          chip.className = "device";
          chip.title = "This branch was written on " + device;
          const said = document.createElement("span");
          said.className = "visually-hidden";
          said.textContent = "from device ";
          chip.append(said, device);
          a.appendChild(chip);
        }
        if (tree.times[i]) a.title = new Date(tree.times[i] * 1000).toLocaleString();
        frag.appendChild(a);
      }
      for (const old of Array.from(viewport.querySelectorAll(".tree-row"))) old.remove();
      viewport.appendChild(frag);
    }
    viewport.addEventListener("scroll", draw, { passive: true });
    redraw = () => { drawn = ""; draw(); };
    treeKept = { get q() { return search.value; }, get filter() { return filter; }, get scrollTop() { return viewport.scrollTop; } };
    let pending = 0;
    search.addEventListener("input", () => { clearTimeout(pending); pending = setTimeout(refresh, 120); });
    // Enter opens the first match.
    search.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && rows.length) { const a = viewport.querySelector(".tree-row"); if (a) a.click(); }
    });
    refresh();
    const at = rows.indexOf(tree.leaf);
    if (kept) { viewport.scrollTop = kept.scrollTop; draw(); }
    else if (at >= 0) { viewport.scrollTop = Math.max(0, at * ROW - viewport.clientHeight / 2); draw(); }
    // On a phone the tree folds away until asked for (once: a rebuild leaves it as the reader set it).
    const fold = root.closest("details");
    if (!again && fold && window.matchMedia("(max-width: 60rem)").matches) fold.open = false;
    body.dataset.treeReady = String(Math.round(performance.now()));
    body.dataset.treeEntries = String(n);
  }

  // Live updates: a live page polls its state with an ETag and appends the entries that arrived.
  if (body.dataset.live !== "1") return;
  const liveStatus = document.getElementById("live-status");
  let etag = null;
  const lastId = () => {
    const entries = document.querySelectorAll("#entries .entry");
    return entries.length ? entries[entries.length - 1].dataset.id : "";
  };
  // The header's counts, as the server counts them now (numbers only: written as text).
  const plural = (n, one, many) => n.toLocaleString("en-US") + " " + (n === 1 ? one : many);
  function updateFacts(f) {
    if (!f || typeof f.messages !== "number") return;
    const set = (name, text) => { const el = document.querySelector('[data-fact="' + name + '"]'); if (el) el.textContent = text; };
    set("messages", plural(f.messages, "message", "messages"));
    set("tool-calls", plural(f.toolCalls, "tool call", "tool calls"));
    set("totals", f.tokens.toLocaleString("en-US") + " tokens · $" + f.cost.toFixed(f.cost < 1 ? 4 : 2));
    const last = document.querySelector('[data-fact="last"] time');
    if (last && typeof f.lastAt === "string") {
      last.setAttribute("datetime", f.lastAt);
      last.textContent = f.lastAt.length >= 16 && f.lastAt[10] === "T" ? f.lastAt.slice(0, 16).replace("T", " ") + " UTC" : f.lastAt.slice(0, 40);
      localTimes(last.parentNode);
    }
  }
  async function poll() {
    try {
      const r = await fetch(base + "/state", { headers: etag ? { "If-None-Match": etag } : {}, cache: "no-store" });
      if (r.status === 200) {
        const fresh = r.headers.get("ETag");
        const state = await r.json().catch(() => null);
        if (etag !== null && fresh !== etag) {
          const f = await fetch(base + "/entries?after=" + encodeURIComponent(lastId()), { cache: "no-store" });
          if (f.ok) {
            const doc = new DOMParser().parseFromString(await f.text(), "text/html");
            for (const node of Array.from(doc.body.children)) { const n = document.adoptNode(node); main.appendChild(n); localTimes(n); }
            updateFacts(state && state.facts);
            if (state && typeof state.leafId === "string") { leaf = state.leafId; body.dataset.leaf = leaf; }
            if (treeRoot) await buildTree(treeRoot, true).catch(() => {});
            liveStatus.textContent = "updated " + new Date().toLocaleTimeString();
          }
        }
        etag = fresh;
      }
    } catch (e) {
      liveStatus.textContent = "offline; retrying";
    }
    setTimeout(poll, 3000);
  }
  poll();
})();
`;
