/**
 * The search port's contract: every adapter runs this suite, with sessions written through the
 * real append protocol into a real store and indexed by the core indexer.
 */
import { Appender, SearchIndexer } from "@pisync/core";
import type { Stores } from "@pisync/store";
import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import { type IndexBatch, parseQuery, QueryError, type SearchIndex, type SearchPage } from "../src/index.js";

export interface SearchFixture {
  index: SearchIndex;
  stores: Stores;
}

const T0 = Date.parse("2026-02-01T10:00:00Z");
let counter = 0;

/** A session's lines, as pi writes them. */
export class SessionWriter {
  private lines: string[] = [];
  private last: string | null = null;
  constructor(
    readonly sessionId: string,
    cwd: string,
    private time = T0,
  ) {
    this.lines.push(JSON.stringify({ type: "session", version: 3, id: sessionId, timestamp: this.stamp(), cwd }));
  }
  private stamp(): string {
    this.time += 1000;
    return new Date(this.time).toISOString();
  }
  private entry(fields: Record<string, unknown>): string {
    const id = `e${(++counter).toString(16).padStart(7, "0")}`;
    this.lines.push(JSON.stringify({ ...fields, id, parentId: this.last, timestamp: this.stamp() }));
    this.last = id;
    return id;
  }
  user(text: string): string {
    return this.entry({ type: "message", message: { role: "user", content: text, timestamp: this.time } });
  }
  assistant(text: string, options: { model?: string; thinking?: string; tool?: [string, object] } = {}): string {
    const content: unknown[] = [{ type: "text", text }];
    if (options.thinking) content.push({ type: "thinking", thinking: options.thinking });
    if (options.tool) content.push({ type: "toolCall", id: "t1", name: options.tool[0], arguments: options.tool[1] });
    const usage = {
      input: 1,
      output: 1,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 2,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    };
    return this.entry({
      type: "message",
      message: {
        role: "assistant",
        content,
        api: "x",
        provider: "p",
        model: options.model ?? "model-a",
        usage,
        stopReason: "stop",
        timestamp: this.time,
      },
    });
  }
  bash(command: string, output: string): string {
    return this.entry({
      type: "message",
      message: {
        role: "bashExecution",
        command,
        output,
        exitCode: 0,
        cancelled: false,
        truncated: false,
        timestamp: this.time,
      },
    });
  }
  label(target: string, label: string): string {
    return this.entry({ type: "label", targetId: target, label });
  }
  name(name: string): string {
    return this.entry({ type: "session_info", name });
  }
  /** The lines written since the last take, as bytes. */
  take(): Uint8Array {
    const bytes = new TextEncoder().encode(this.lines.map((l) => `${l}\n`).join(""));
    this.lines = [];
    return bytes;
  }
}

const sessionsOf = (page: SearchPage) => page.sessions.map((s) => s.sessionId);

export function describeSearchContract(name: string, setup: () => Promise<SearchFixture>): void {
  describe(`search contract: ${name}`, () => {
    let index: SearchIndex;
    let stores: Stores;
    let appender: Appender;
    let indexer: SearchIndexer;
    let user: string;
    const offsets = new Map<string, number>();

    beforeEach(async () => {
      ({ index, stores } = await setup());
      appender = new Appender(stores);
      indexer = new SearchIndexer(stores, index);
      user = `user${++counter}`;
    });

    async function append(
      writer: SessionWriter,
      options: { userId?: string; skipIndex?: boolean; replace?: boolean } = {},
    ) {
      const userId = options.userId ?? user;
      const key = `${userId}/${writer.sessionId}`;
      const offset = options.replace ? 0 : (offsets.get(key) ?? 0);
      const result = await appender.append({
        userId,
        sessionId: writer.sessionId,
        offset,
        body: writer.take(),
        replace: options.replace,
      });
      offsets.set(key, result.offset);
      if (!options.skipIndex) await indexer.sync(userId, writer.sessionId);
    }
    const search = (q: string, limit = 20, cursor?: string, userId = user) =>
      index.search(userId, parseQuery(q), { limit, cursor });

    it("finds words, with a highlighted snippet and the entry id", async () => {
      const s = new SessionWriter("sess-words", "/home/me/app");
      s.user("please fix the S3 retry bug");
      const reply = s.assistant("The retry loop now backs off exponentially");
      await append(s);
      const page = await search("exponentially");
      expect(sessionsOf(page)).toEqual(["sess-words"]);
      const hit = page.sessions[0].entries[0];
      expect(hit.entryId).toBe(reply);
      expect(hit.kind).toBe("assistant");
      expect(hit.snippet.filter((p) => p.hit).map((p) => p.text)).toEqual(["exponentially"]);
      expect(hit.snippet.map((p) => p.text).join("")).toContain("retry loop now backs off");
      expect(page.sessions[0].cwd).toBe("/home/me/app");
    });

    it("ranks by bm25, then newest first on ties, grouped by session", async () => {
      const many = new SessionWriter("sess-many", "/a");
      many.user("kraken kraken kraken kraken");
      await append(many);
      const older = new SessionWriter("sess-older", "/a", T0);
      older.user("a kraken here and other words to dilute it");
      await append(older);
      const newer = new SessionWriter("sess-newer", "/a", T0 + 100_000);
      newer.user("a kraken here and other words to dilute it");
      newer.assistant("more on the kraken and other words to dilute it");
      await append(newer);
      const page = await search("kraken");
      expect(sessionsOf(page)).toEqual(["sess-many", "sess-newer", "sess-older"]);
      expect(page.sessions[1].entries).toHaveLength(2);
    });

    it("matches exact phrases, prefixes and exclusions", async () => {
      const a = new SessionWriter("sess-a", "/a");
      a.user("the quick brown fox");
      await append(a);
      const b = new SessionWriter("sess-b", "/a");
      b.user("brown quick the fox quickly");
      await append(b);
      expect(sessionsOf(await search('"quick brown"'))).toEqual(["sess-a"]);
      expect(sessionsOf(await search("quickl*"))).toEqual(["sess-b"]);
      expect(sessionsOf(await search("fox -quickly"))).toEqual(["sess-a"]);
      expect(sessionsOf(await search('fox -"quick brown"'))).toEqual(["sess-b"]);
      expect(sessionsOf(await search('"brown the"'))).toEqual([]);
    });

    it("filters by role, cwd, model, label and time", async () => {
      const a = new SessionWriter("sess-f1", "/home/me/alpha", T0);
      const asked = a.user("deploy the lambda");
      a.assistant("lambda deployed", {
        model: "claude-opus",
        thinking: "lambda thoughts",
        tool: ["bash", { command: "cdk deploy lambda" }],
      });
      a.bash("ls lambda", "lambda.zip");
      a.label(asked, "shipped");
      await append(a);
      const b = new SessionWriter("sess-f2", "/home/me/beta", T0 + 30 * 86_400_000);
      b.user("lambda again");
      b.assistant("lambda", { model: "gpt-5" });
      await append(b);
      expect(sessionsOf(await search("lambda role:user"))).toEqual(expect.arrayContaining(["sess-f1", "sess-f2"]));
      const tools = await search("lambda role:tool");
      expect(sessionsOf(tools)).toEqual(["sess-f1"]);
      expect(tools.sessions[0].entries.map((e) => e.kind).sort()).toEqual(["bash", "tool_call"]);
      expect(sessionsOf(await search("lambda cwd:BETA"))).toEqual(["sess-f2"]);
      expect(sessionsOf(await search("lambda model:opus"))).toEqual(["sess-f1"]);
      expect(sessionsOf(await search("lambda label:shipped"))).toEqual(["sess-f1"]);
      expect(sessionsOf(await search("lambda before:2026-02-15"))).toEqual(["sess-f1"]);
      expect(sessionsOf(await search("lambda since:2026-02-15"))).toEqual(["sess-f2"]);
      expect(sessionsOf(await search("label:shipped"))).toEqual(["sess-f1"]);
      const thinking = await search("thoughts");
      expect(thinking.sessions[0].entries[0].kind).toBe("thinking");
    });

    it("indexes session names and labels as text", async () => {
      const a = new SessionWriter("sess-named", "/a");
      const id = a.user("hello");
      a.name("Migration to Graviton");
      a.label(id, "checkpoint-one");
      await append(a);
      expect(sessionsOf(await search("graviton"))).toEqual(["sess-named"]);
      expect((await search("graviton")).sessions[0].name).toBe("Migration to Graviton");
      expect(sessionsOf(await search("checkpoint"))).toEqual(["sess-named"]);
    });

    it("pages through sessions with a cursor, and refuses a forged one", async () => {
      for (let i = 0; i < 5; i++) {
        const s = new SessionWriter(`sess-page-${i}`, "/a", T0 + i * 1000);
        s.user("pagination needle");
        await append(s);
      }
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await search("needle", 2, cursor);
        expect(page.sessions.length).toBeLessThanOrEqual(2);
        seen.push(...sessionsOf(page));
        cursor = page.cursor;
      } while (cursor);
      expect(seen).toEqual(["sess-page-4", "sess-page-3", "sess-page-2", "sess-page-1", "sess-page-0"]);
      await expect(search("needle", 2, "not-a-cursor")).rejects.toBeInstanceOf(QueryError);
    });

    it("follows appends, and catches up after a crash between an append and its index update", async () => {
      const s = new SessionWriter("sess-crash", "/a");
      s.user("first part");
      await append(s);
      s.assistant("second part mentions zeppelin");
      await append(s, { skipIndex: true });
      expect(sessionsOf(await search("zeppelin"))).toEqual([]);
      await indexer.catchUp();
      expect(sessionsOf(await search("zeppelin"))).toEqual(["sess-crash"]);
      s.user("third part mentions dirigible");
      await append(s);
      expect(sessionsOf(await search("dirigible"))).toEqual(["sess-crash"]);
      expect(sessionsOf(await search("first"))).toEqual(["sess-crash"]);
      expect((await search("first")).sessions[0].entries).toHaveLength(1); // nothing indexed twice
    });

    it("catches up a session never indexed, for a user the index did not know", async () => {
      const s = new SessionWriter("sess-new-user", "/a");
      s.user("unindexed walrus");
      await append(s, { skipIndex: true });
      await indexer.catchUp([user]);
      expect(sessionsOf(await search("walrus"))).toEqual(["sess-new-user"]);
    });

    it("a catch-up pass visits every user its user source lists, not only those it was given", async () => {
      const s = new SessionWriter("sess-first", "/a");
      s.user("a newcomer's first capybara");
      await append(s, { skipIndex: true });
      await new SearchIndexer(stores, index).catchUp([]);
      expect(sessionsOf(await search("capybara"))).toEqual([]);
      await new SearchIndexer(stores, index, { users: async () => [user] }).catchUp([]);
      expect(sessionsOf(await search("capybara"))).toEqual(["sess-first"]);
    });

    it("the background drain indexes sessions marked dirty: appends, many sessions, new generations, deletions", async () => {
      const drained = new SearchIndexer(stores, index, { drainDelayMs: 0 });
      const writers = ["sess-d1", "sess-d2", "sess-d3"].map((id) => new SessionWriter(id, "/a"));
      for (const [i, w] of writers.entries()) {
        w.user(`drained heron number ${i}`);
        await append(w, { skipIndex: true });
        drained.markDirty(user, w.sessionId);
      }
      writers[0].assistant("and then a later kestrel");
      await append(writers[0], { skipIndex: true });
      drained.markDirty(user, "sess-d1"); // marked twice before the drain: indexed once, whole
      await drained.flush();
      expect(sessionsOf(await search("heron")).sort()).toEqual(["sess-d1", "sess-d2", "sess-d3"]);
      expect(sessionsOf(await search("kestrel"))).toEqual(["sess-d1"]);
      expect((await search("drained")).sessions.flatMap((h) => h.entries)).toHaveLength(3); // nothing twice
      const again = new SessionWriter("sess-d2", "/b");
      again.user("rewritten as a pelican");
      await append(again, { replace: true, skipIndex: true });
      await stores.meta.deleteSession(user, "sess-d3", new Date().toISOString());
      drained.markDirty(user, "sess-d2");
      drained.markDirty(user, "sess-d3");
      drained.markDirty(user, "sess-never-written");
      await drained.flush();
      expect(sessionsOf(await search("heron"))).toEqual(["sess-d1"]);
      expect(sessionsOf(await search("pelican"))).toEqual(["sess-d2"]);
      expect(await index.state(user, "sess-d3")).toBeUndefined();
    });

    it("applyAll adds many batches at once and refuses only the stale ones", async () => {
      const a = new SessionWriter("sess-all-a", "/a");
      a.user("batched ibis");
      await append(a);
      const state = await index.state(user, "sess-all-a");
      const batch = (sessionId: string, from: number, text: string): IndexBatch => ({
        userId: user,
        sessionId,
        generation: 1,
        from,
        to: from + 10,
        documents: [{ entryId: `e-${sessionId}`, kind: "user", role: "user", text, time: T0 }],
        labels: {},
      });
      const applied = await index.applyAll([
        batch("sess-all-a", (state?.offset ?? 0) + 5, "stale stork"),
        batch("sess-all-b", 0, "fresh crane"),
        batch("sess-all-b", 10, "then a spoonbill"),
      ]);
      expect(applied).toEqual([false, true, true]);
      expect(sessionsOf(await search("stork"))).toEqual([]);
      expect(sessionsOf(await search("crane"))).toEqual(["sess-all-b"]);
      expect(sessionsOf(await search("spoonbill"))).toEqual(["sess-all-b"]);
      expect(await index.state(user, "sess-all-b")).toEqual({ generation: 1, offset: 20 });
      expect(await index.applyAll([])).toEqual([]);
    });

    it("a v1 session (ids from line numbers) appended to keeps its entries' ids", async () => {
      const line = (o: object) => `${JSON.stringify(o)}\n`;
      const message = (text: string, at: string) =>
        line({ type: "message", timestamp: at, message: { role: "user", content: text, timestamp: 1 } });
      const first =
        line({ type: "session", id: "sess-v1", timestamp: "2025-06-01T10:00:00.000Z", cwd: "/old" }) +
        message("an old lemur", "2025-06-01T10:00:01.000Z");
      const second = message("a later tapir", "2025-06-01T10:00:02.000Z");
      await appender.append({ userId: user, sessionId: "sess-v1", offset: 0, body: new TextEncoder().encode(first) });
      await indexer.sync(user, "sess-v1");
      const offset = new TextEncoder().encode(first).length;
      await appender.append({ userId: user, sessionId: "sess-v1", offset, body: new TextEncoder().encode(second) });
      const drained = new SearchIndexer(stores, index, { drainDelayMs: 0 });
      drained.markDirty(user, "sess-v1");
      await drained.flush();
      expect((await search("tapir")).sessions[0].entries.map((e) => e.entryId)).toEqual(["00000003"]); // its 1-based line number
      expect((await search("lemur")).sessions[0].entries.map((e) => e.entryId)).toEqual(["00000002"]);
      await indexer.sync(user, "sess-v1"); // up to date: nothing indexed twice
      expect((await search("lemur")).sessions[0].entries).toHaveLength(1);
    });

    it("a new generation replaces the session's documents", async () => {
      const s = new SessionWriter("sess-gen", "/a");
      s.user("before the rewrite: marmot");
      await append(s);
      const again = new SessionWriter("sess-gen", "/b");
      again.user("after the rewrite: otter");
      await append(again, { replace: true });
      expect(sessionsOf(await search("marmot"))).toEqual([]);
      expect(sessionsOf(await search("otter"))).toEqual(["sess-gen"]);
      expect((await search("otter")).sessions[0].cwd).toBe("/b");
      expect((await index.state(user, "sess-gen"))?.generation).toBe(2);
    });

    it("deleting a session removes its documents", async () => {
      const s = new SessionWriter("sess-del", "/a");
      s.user("ephemeral axolotl");
      await append(s);
      await stores.meta.deleteSession(user, "sess-del", new Date().toISOString());
      await indexer.sync(user, "sess-del");
      expect(sessionsOf(await search("axolotl"))).toEqual([]);
      expect(await index.state(user, "sess-del")).toBeUndefined();
    });

    it("a catch-up pass removes sessions the store no longer has", async () => {
      const s = new SessionWriter("sess-gone", "/a");
      s.user("vanishing quokka");
      await append(s);
      await stores.meta.deleteSession(user, "sess-gone", new Date().toISOString());
      await indexer.catchUp();
      expect(sessionsOf(await search("quokka"))).toEqual([]);
    });

    it("rebuilds everything from the stored bytes", async () => {
      const s = new SessionWriter("sess-rebuild", "/a");
      s.user("rebuilt narwhal");
      await append(s);
      await index.clear(user);
      expect(sessionsOf(await search("narwhal"))).toEqual([]);
      await indexer.rebuild([user]);
      expect(sessionsOf(await search("narwhal"))).toEqual(["sess-rebuild"]);
    });

    it("refuses a batch that does not start where the session stands", async () => {
      const s = new SessionWriter("sess-stale", "/a");
      s.user("stale");
      await append(s);
      const batch: IndexBatch = {
        userId: user,
        sessionId: "sess-stale",
        generation: 1,
        from: 3,
        to: 9,
        documents: [],
        labels: {},
      };
      expect(await index.apply(batch)).toBe(false);
    });

    it("never answers another user's sessions", async () => {
      const mine = new SessionWriter("sess-mine", "/a");
      mine.user("private platypus");
      await append(mine);
      const theirs = new SessionWriter("sess-mine", "/a");
      theirs.user("their platypus");
      await append(theirs, { userId: `${user}-other` });
      const page = await search("platypus");
      expect(page.sessions).toHaveLength(1);
      expect(page.sessions[0].entries[0].snippet.map((p) => p.text).join("")).toContain("private");
      expect(sessionsOf(await search("their"))).toEqual([]);
      expect(sessionsOf(await search("role:user"))).toEqual(["sess-mine"]);
      await index.remove(`${user}-other`, "sess-mine");
      expect(sessionsOf(await search("private"))).toEqual(["sess-mine"]);
    });

    it("label: alone lists the labelled entries, not the session's newest ones", async () => {
      const s = new SessionWriter("sess-labelled", "/a");
      s.user("an unrelated start");
      const fixed = s.assistant("the fix: retry with jitter");
      s.user("more unrelated talk");
      s.assistant("and an unrelated reply after it");
      s.label(fixed, "the-fix");
      await append(s);
      const page = await search("label:the-fix");
      expect(sessionsOf(page)).toEqual(["sess-labelled"]);
      expect(page.sessions[0].entries.map((e) => [e.entryId, e.kind])).toEqual([[fixed, "assistant"]]);
      expect((await search("retry label:the-fix")).sessions[0].entries.map((e) => e.entryId)).toEqual([fixed]);
      expect(sessionsOf(await search("unrelated label:the-fix"))).toEqual([]);
    });

    it("cuts a tool call's snippet from its arguments as text, without JSON escapes", async () => {
      const s = new SessionWriter("sess-tool-text", "/a");
      s.assistant("running it", { tool: ["bash", { command: 'grep -n "needle" src\nls -la', cwd: "/w" }] });
      await append(s);
      const [hit] = (await search("needle role:tool")).sessions[0].entries;
      const text = hit.snippet.map((p) => p.text).join("");
      expect(hit.kind).toBe("tool_call");
      expect(text).toContain('grep -n "needle" src');
      expect(text).not.toMatch(/\\["n]/);
      expect(text).toContain("ls -la");
    });

    it("file: finds the entries whose tool calls name a path: exact, a tail, a glob, a folder", async () => {
      const s = new SessionWriter("sess-files", "/w/app");
      s.user("please look at src/notes.ts");
      const read = s.assistant("reading", { tool: ["read", { path: "src/cart.ts" }] });
      const edit = s.assistant("editing", {
        tool: ["edit", { path: "./src//lib/util.ts", oldText: "a", newText: "b" }],
      });
      const grep = s.assistant("searching", { tool: ["grep", { pattern: "*.md", path: "docs/" }] });
      const cd = s.assistant("testing", { tool: ["bash", { command: "cd /w/app/pkg && npm test" }] });
      const bang = s.bash("cd /w/app/web && ls", "index.html"); // a user's `!` command
      await append(s);
      const entries = async (q: string) =>
        (await search(q)).sessions.flatMap((session) => session.entries.map((e) => e.entryId)).sort();
      expect(await entries("file:src/cart.ts")).toEqual([read]);
      expect((await search("file:src/cart.ts")).sessions[0].entries[0].kind).toBe("tool_call");
      expect(await entries("file:src/lib/util.ts")).toEqual([edit]); // stored normalised
      expect(await entries("file:lib/util.ts")).toEqual([edit]); // a tail, on a folder boundary
      expect(await entries("file:til.ts")).toEqual([]);
      expect(await entries("file:*.ts")).toEqual([read, edit].sort());
      expect(await entries("file:src/")).toEqual([read, edit].sort());
      expect(await entries("file:docs")).toEqual([grep]);
      expect(await entries("file:docs/")).toEqual([grep]); // the folder itself
      expect(await entries("file:*.md")).toEqual([]); // a grep pattern is not a path
      expect(await entries("file:/w/app/pkg")).toEqual([cd]);
      expect(await entries("file:/app/pkg")).toEqual([]); // a value starting with / is not a tail
      expect(await entries("file:/w/app/web")).toEqual([bang]);
      expect(await entries("file:src/notes.ts")).toEqual([]); // a user's words are not a tool's path
      expect(await entries("file:src/Cart.ts")).toEqual([]); // paths are case-sensitive
      expect(await entries("file:src/?art.ts")).toEqual([]); // only * is a wildcard
      expect(await entries("reading file:*.ts")).toEqual([]); // the text is the call's, not the message's
      expect(await entries("cart file:*.ts")).toEqual([read]);
      expect(await entries("file:*.ts role:user")).toEqual([]);
      await index.remove(user, "sess-files");
      expect(await entries("file:*.ts")).toEqual([]);
    });

    it("file: and the files list never answer another user's paths", async () => {
      const mine = new SessionWriter("sess-shared-id", "/a");
      const read = mine.assistant("reading", { tool: ["read", { path: "src/cart.ts" }] });
      await append(mine);
      const theirs = new SessionWriter("sess-shared-id", "/a");
      theirs.assistant("reading", { tool: ["read", { path: "src/cart.ts" }] });
      theirs.assistant("writing", { tool: ["write", { path: "secret/plan.ts", content: "x" }] });
      await append(theirs, { userId: `${user}-other` });
      const page = await search("file:src/cart.ts");
      expect(page.sessions.map((s) => s.entries.map((e) => e.entryId))).toEqual([[read]]);
      expect(sessionsOf(await search("file:secret/"))).toEqual([]);
      expect(sessionsOf(await search("file:*.ts"))).toEqual(["sess-shared-id"]);
      expect(await index.files(user, "sess-shared-id", 10)).toEqual([{ path: "src/cart.ts", entryId: read }]);
      expect(await index.files(`${user}-nobody`, "sess-shared-id", 10)).toEqual([]);
    });

    it("lists the files a session touched, each with the first entry that touched it, bounded", async () => {
      const s = new SessionWriter("sess-list", "/a");
      const first = s.assistant("reading", { tool: ["read", { path: "b.ts" }] });
      const second = s.assistant("listing", { tool: ["ls", { path: "src" }] });
      s.assistant("reading again", { tool: ["read", { path: "b.ts" }] });
      await append(s);
      const third = s.assistant("writing", { tool: ["write", { path: "a.ts", content: "" }] });
      await append(s); // an append indexes its own entries' files
      expect(await index.files(user, "sess-list", 10)).toEqual([
        { path: "b.ts", entryId: first },
        { path: "src", entryId: second },
        { path: "a.ts", entryId: third },
      ]);
      expect(await index.files(user, "sess-list", 2)).toHaveLength(2);
      expect(await index.files(user, "sess-missing", 10)).toEqual([]);
    });

    it("another user's words change nothing in a user's answers: hits, snippets, completions, order", async () => {
      const victim = `${user}-victim`;
      // The completion oracle: 15 frequent words of one prefix and a rare probe fill the 16 completions.
      const words = new SessionWriter("sess-oracle", "/a");
      for (let i = 0; i < 15; i++)
        for (let j = 0; j < 3; j++) words.user(`ak${String.fromCharCode(97 + i)}word filler`);
      await append(words);
      const probe = new SessionWriter("sess-probe", "/a");
      probe.user("akzprobe once");
      await append(probe);
      // Two entries whose order depends on the two words' statistics (bm25's idf).
      const first = new SessionWriter("sess-rank-1", "/a");
      first.user("alpha alpha beta");
      await append(first);
      const second = new SessionWriter("sess-rank-2", "/a");
      second.user("alpha beta beta");
      await append(second);
      const betas = new SessionWriter("sess-rank-3", "/a");
      for (let i = 0; i < 3; i++) betas.user("beta gamma");
      await append(betas);
      const queries = ["ak*", "akz*", "alpha beta", "beta", "filler", "akia*", "secret*"];
      const answers = () => Promise.all(queries.map((q) => search(q)));
      const alone = await answers();
      expect(sessionsOf(alone[0])).toContain("sess-probe");
      expect(sessionsOf(alone[2])).toEqual(["sess-rank-1", "sess-rank-2"]);
      // Another user: a credential-like word of the same prefix in many entries, and "alpha" everywhere.
      const theirs = new SessionWriter("sess-victim", "/a");
      for (let i = 0; i < 20; i++) theirs.user(`akiasecretkey alpha ${i}`);
      await append(theirs, { userId: victim });
      expect(sessionsOf(await search("akia*", 20, undefined, victim))).toEqual(["sess-victim"]);
      expect(await answers()).toEqual(alone);
      await index.remove(victim, "sess-victim");
      expect(await answers()).toEqual(alone);
    });

    it("one session that fails to index holds up no other, and is retried with backoff, not at every pass", async () => {
      let poisoned = true;
      const isPoison = (sessionId: string) => poisoned && sessionId === "sess-poisoned";
      const fail = () => Promise.reject(new Error("the index refused the poisoned batch"));
      // The real index, whose transactions fail while they hold the poisoned session.
      const faulty: SearchIndex = {
        state: (u, s) => index.state(u, s),
        sessions: (u) => index.sessions(u),
        users: () => index.users(),
        apply: (b) => (isPoison(b.sessionId) ? fail() : index.apply(b)),
        applyAll: (bs) => (bs.some((b) => isPoison(b.sessionId)) ? fail() : index.applyAll(bs)),
        ...(index.applyLines
          ? {
              applyLines: (items: Parameters<NonNullable<SearchIndex["applyLines"]>>[0]) =>
                items.some((i) => isPoison(i.at.sessionId)) ? fail() : (index.applyLines?.(items) ?? fail()),
            }
          : {}),
        remove: (u, s) => index.remove(u, s),
        clear: (u) => index.clear(u),
        files: (u, s, l) => index.files(u, s, l),
        search: (u, q, o) => index.search(u, q, o),
      };
      let now = Date.now();
      const log: string[] = [];
      const drained = new SearchIndexer(stores, faulty, { drainDelayMs: 0, log: (l) => log.push(l), now: () => now });
      const other = `${user}-neighbour`;
      const sessions: Array<[string, string, string]> = [
        [user, "sess-poisoned", "a poisoned heron"],
        [user, "sess-healthy-1", "a healthy heron"],
        [user, "sess-healthy-2", "another healthy heron"],
        [other, "sess-neighbour", "the neighbour's heron"],
      ];
      for (const [userId, sessionId, text] of sessions) {
        const s = new SessionWriter(sessionId, "/a");
        s.user(text);
        await append(s, { userId, skipIndex: true });
      }
      // All marked at once: one drain step (one transaction) holds them all.
      for (const [userId, sessionId] of sessions) drained.markDirty(userId, sessionId);
      await drained.flush();
      expect(sessionsOf(await search("heron")).sort()).toEqual(["sess-healthy-1", "sess-healthy-2"]);
      expect(sessionsOf(await search("heron", 20, undefined, other))).toEqual(["sess-neighbour"]);
      expect(log).toHaveLength(1);
      expect(log[0]).toMatch(/sess-poisoned.*the index refused the poisoned batch/);
      // Passes and writes during the backoff leave it alone: no work, no log line.
      drained.markDirty(user, "sess-poisoned");
      await drained.flush();
      await drained.catchUp([user]);
      expect(log).toHaveLength(1);
      expect(drained.failures()).toMatchObject([{ userId: user, sessionId: "sess-poisoned", attempts: 1 }]);
      // Once the backoff passed, the next pass retries it.
      poisoned = false;
      now += 60_000;
      await drained.catchUp([user]);
      expect(sessionsOf(await search("poisoned"))).toEqual(["sess-poisoned"]);
      expect(drained.failures()).toEqual([]);
      expect(log).toHaveLength(1);
    });

    it("a line nested deeper than the ingest limit is indexed as its text; the lines around it as usual", async () => {
      const s = new SessionWriter("sess-deep", "/a");
      s.user("before the deep line: a bittern");
      const deep = s.assistant("placeholder", { tool: ["bash", { nested: "DEEP" }] });
      s.user("after the deep line: a curlew");
      const bytes = new TextDecoder()
        .decode(s.take())
        .replace('"DEEP"', `${"[".repeat(5000)}"a deep gadwall"${"]".repeat(5000)}`);
      const result = await appender.append({
        userId: user,
        sessionId: "sess-deep",
        offset: 0,
        body: new TextEncoder().encode(bytes),
      });
      expect(result.offset).toBe(new TextEncoder().encode(bytes).length); // the bytes are kept as they are
      await indexer.sync(user, "sess-deep");
      expect(sessionsOf(await search("bittern"))).toEqual(["sess-deep"]);
      expect(sessionsOf(await search("curlew"))).toEqual(["sess-deep"]);
      const [hit] = (await search("gadwall")).sessions[0].entries;
      expect(hit.entryId).toBe(deep);
      expect(hit.snippet.filter((p) => p.hit).map((p) => p.text)).toEqual(["gadwall"]);
      // A line longer than the limit (4 MiB): its start indexed and cut as text.
      const long = new SessionWriter("sess-long", "/a");
      const huge = long.bash("cat big.log", `a long shoveler ${"filler ".repeat(700_000)}`);
      await append(long);
      const [longHit] = (await search("shoveler")).sessions[0].entries;
      expect(longHit.entryId).toBe(huge);
      expect(longHit.snippet.filter((p) => p.hit).map((p) => p.text)).toEqual(["shoveler"]);
    });

    it("runs any query text without an engine error", async () => {
      const s = new SessionWriter("sess-fuzz", "/a");
      s.user('NEAR(a b) "x" AND OR NOT * ^col:x {a b}:c');
      await append(s);
      await fc.assert(
        fc.asyncProperty(fc.string({ maxLength: 60 }), async (text) => {
          let query: ReturnType<typeof parseQuery>;
          try {
            query = parseQuery(text);
          } catch (error) {
            expect(error).toBeInstanceOf(QueryError);
            return;
          }
          await index.search(user, query, { limit: 5 });
        }),
        { numRuns: 300 },
      );
      expect(sessionsOf(await search('"NEAR(a b)"'))).toEqual(["sess-fuzz"]);
    });
  });
}
