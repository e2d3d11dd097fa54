/**
 * Library benchmark: the first sessions page (`GET /`, 50 sessions, every filter's choices) of
 * a user with 10,000 sessions, on the embedded store and on the AWS pair (DynamoDB Local +
 * s3rver behind the SigV4 gate); server time, p95 of 20 warm requests, target ≤ 150 ms for the
 * first page and a filtered page. Baselines in the same run: `/healthz` and the API's own first
 * page of the same list (`GET /v1/sessions?limit=50`). Also filtered pages (a model and a
 * folder, each and both; a month), with the items each read on the AWS pair, the shares page, and
 * the insights page (`/insights`, a year of usage by day, model, project, machine and tool; same
 * target; on the AWS pair with the day items it read) with its API (`/v1/insights`).
 * `LIBRARY_STORES=embedded` or `=aws` runs one pair only.
 *
 * A team (`LIBRARY_STORES=team`, in the default run too): 10 members × 1,000 sessions each
 * (`TEAM_MEMBERS`, `TEAM_SESSIONS`), all in one team, on the embedded store with search. One
 * member's requests, p95: the team's first page (`GET /v1/teams/T/sessions?limit=50`) and a
 * team search (`GET /v1/search?q=…&team=T`), each against the same member's own first page and
 * own search of the same words, taken in turns (the machine's load meets both), `TEAM_SAMPLES`
 * (300) of each, with the ratio (target ≤ 1.5). Generated once into `.bench/` (about 4 minutes here, with its indexes).
 *
 * The library is generated cheaply: 10,000 small sessions (a header, a user message, an
 * assistant reply; 20 folders, 6 models, a year of dates), appended through core's `Appender`
 * straight into the store (no HTTP, no search index): once into `.bench/` for the embedded
 * store, on every run for the AWS pair (DynamoDB Local keeps nothing). Server time is the app's
 * own time (`app.request`, in process): no sockets, no client.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "@pisync/api";
import { Appender, SearchIndexer, storedLines, TeamSearch, Teams, Tokens, teamLines } from "@pisync/core";
import { SqliteSearchIndex } from "@pisync/search/embedded";
import { StorageUnavailableError, type Stores } from "@pisync/store";
import { awsStores, type DynamoMetaStore } from "@pisync/store/aws";
import { embeddedStores } from "@pisync/store/embedded";
import { withAwsServers } from "./aws-servers.js";

const SESSIONS = Number(process.env.LIBRARY_SESSIONS ?? 10_000);
const MODELS = ["claude-sonnet-4-5", "claude-opus-4-1", "gpt-5", "gpt-5-mini", "gemini-2.5-pro", "kimi-k2"];

/** Session `i`: its day spreads over 2025, its folder over 20 projects, its model over 6. */
function session(i: number, id = `bench-${String(i).padStart(5, "0")}`): Uint8Array {
  const day = new Date(Date.UTC(2025, 0, 1) + ((i * 37) % 365) * 86_400_000 + (i % 86_400) * 1000).toISOString();
  const cwd = `/home/dev/project-${i % 20}${i % 3 ? "/src" : ""}`;
  const lines = [
    { type: "session", version: 3, id, timestamp: day, cwd },
    {
      type: "message",
      id: "u1",
      parentId: null,
      timestamp: day,
      message: { role: "user", content: `Task ${i}: fix the thing in module ${i % 97}`, timestamp: 1 },
    },
    {
      type: "message",
      id: "a1",
      parentId: "u1",
      timestamp: day,
      message: {
        role: "assistant",
        content: [{ type: "text", text: `Done with task ${i}.` }],
        provider: "bench",
        model: MODELS[i % MODELS.length],
        usage: {
          input: 100,
          output: 20,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 120,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.001 },
        },
        stopReason: "stop",
        timestamp: 2,
      },
    },
  ];
  return new TextEncoder().encode(lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
}

type Result = [string, { p95: number; median: number; items?: number }];

/** Appends the generated library, `parallel` sessions at a time. */
async function generate(stores: Stores, parallel: number) {
  const appender = new Appender(stores);
  const t = performance.now();
  for (let i = 0; i < SESSIONS; i += parallel) {
    const batch = Array.from({ length: Math.min(parallel, SESSIONS - i) }, (_, k) => i + k);
    await Promise.all(
      batch.map(async (n) => {
        const append = {
          userId: "bench",
          sessionId: `bench-${String(n).padStart(5, "0")}`,
          offset: 0,
          body: session(n),
        };
        // A busy DynamoDB Local may time a commit out: the same append again is recognised if it landed.
        for (let attempt = 1; ; attempt++) {
          try {
            return await appender.append(append);
          } catch (error) {
            if (!(error instanceof StorageUnavailableError) || attempt === 5) throw error;
          }
        }
      }),
    );
  }
  console.log(`generated ${SESSIONS} sessions in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

/**
 * p95 and median of 20 warm requests (after 5 to warm up), in ms; checks the answer. With
 * `before`, each request follows it (not timed), so nothing read before is reused.
 */
async function timer(app: ReturnType<typeof createApp>, headers: Record<string, string>) {
  return async (path: string, check: (text: string) => boolean, before?: () => Promise<void>) => {
    const runs: number[] = [];
    for (let i = 0; i < 25; i++) {
      if (before) await before();
      const t = performance.now();
      const r = await app.request(path, { headers });
      const text = await r.text();
      const ms = performance.now() - t;
      if (r.status !== 200 || !check(text)) throw new Error(`${path}: ${r.status} ${text.slice(0, 200)}`);
      if (i >= 5) runs.push(ms);
    }
    runs.sort((a, b) => a - b);
    return { p95: runs[Math.ceil(runs.length * 0.95) - 1], median: runs[Math.floor(runs.length / 2)] };
  };
}

const rows = (text: string) => (text.match(/<li class="session">/g) ?? []).length;

/**
 * The requests both pairs answer: the lists. With `reads` (items the store has read so far),
 * each result says how many items one request read, on average.
 */
async function listRequests(time: Awaited<ReturnType<typeof timer>>, reads?: () => number): Promise<Result[]> {
  const counted = async (path: string, check: (text: string) => boolean) => {
    const before = reads?.() ?? 0;
    const result = await time(path, check);
    return reads ? { ...result, items: (reads() - before) / 25 } : result;
  };
  return [
    ["/healthz", await time("/healthz", (t) => t.includes("ok"))],
    [
      "GET /v1/sessions?limit=50 (baseline)",
      await time("/v1/sessions?limit=50", (t) => JSON.parse(t).sessions.length === 50),
    ],
    ["GET / (first page)", await counted("/", (t) => rows(t) === 50)],
    ["GET /?cwd=/home/dev/project-2", await counted("/?cwd=%2Fhome%2Fdev%2Fproject-2", (t) => rows(t) === 50)],
    ["GET /?model=gpt-5", await counted("/?model=gpt-5", (t) => rows(t) === 50)],
    [
      "GET /?model=gpt-5&cwd=/home/dev/project-2",
      await counted("/?model=gpt-5&cwd=%2Fhome%2Fdev%2Fproject-2", (t) => rows(t) > 0),
    ],
    ["GET /?from=2025-06-01&to=2025-06-30", await counted("/?from=2025-06-01&to=2025-06-30", (t) => rows(t) > 0)],
    ["GET /shares", await counted("/shares", (t) => t.includes("Make link"))],
  ];
}

/** Prints a pair's table and its targets. */
function report(title: string, results: Result[], targets: string[]) {
  const base = results[1][1].p95;
  console.log(`\nlibrary of ${SESSIONS} sessions (${title}), server time of 20 warm requests:`);
  console.log("| request | median ms | p95 ms | p95 / baseline | items read per request |");
  console.log("|---|---|---|---|---|");
  for (const [name, r] of results) {
    const items = r.items === undefined ? "" : r.items.toFixed(0);
    console.log(`| ${name} | ${r.median.toFixed(1)} | ${r.p95.toFixed(1)} | ${(r.p95 / base).toFixed(2)} | ${items} |`);
  }
  for (const [name, r] of results.filter(([name]) => targets.includes(name))) {
    console.log(`target: ${name} p95 ≤ 150 ms: ${r.p95.toFixed(1)} ms — ${r.p95 <= 150 ? "met" : "NOT met"}`);
  }
}

const pairs = (process.env.LIBRARY_STORES ?? "embedded,aws,team").split(",");
const TARGETS = [
  "GET / (first page)",
  "GET /?cwd=/home/dev/project-2",
  "GET /?model=gpt-5",
  "GET /?model=gpt-5&cwd=/home/dev/project-2",
];

if (pairs.includes("embedded")) {
  // v2: sessions appended since cards carry usage rollups (a file from before usage was kept by
  // day gets its days when it is opened).
  const dataDir = join(process.cwd(), ".bench", `library-v2-${SESSIONS}`);
  const fresh = !existsSync(dataDir);
  mkdirSync(dataDir, { recursive: true });
  const stores = embeddedStores(dataDir);
  if (fresh) await generate(stores, 1);
  const { token } = await new Tokens(stores.meta).create("bench", "bench");
  const app = createApp({ stores, log: () => {} });
  const time = await timer(app, { Authorization: `Bearer ${token}`, Accept: "text/html" });
  /**
   * A write before a request, by another connection to the same files (a second process):
   * nothing the server read before is reused.
   */
  const other = embeddedStores(dataDir);
  const otherAppender = new Appender(other);
  const write = async () => {
    await otherAppender.append({ userId: "bench", sessionId: "scratch", offset: 0, body: session(0, "scratch") });
    await other.meta.deleteSession("bench", "scratch", new Date().toISOString());
  };
  const results: Result[] = [
    ...(await listRequests(time)),
    ["GET / after another process wrote (nothing cached)", await time("/", (t) => rows(t) === 50, write)],
    [
      "GET /insights (all of 2025)",
      await time("/insights?from=2025-01-01&to=2025-12-31", (t) => t.includes("svg class")),
    ],
    [
      "GET /v1/insights (all of 2025)",
      await time("/v1/insights?from=2025-01-01&to=2025-12-31", (t) => JSON.parse(t).totals.sessions === SESSIONS),
    ],
  ];
  report("embedded store", results, [
    ...TARGETS,
    "GET / after another process wrote (nothing cached)",
    "GET /insights (all of 2025)",
  ]);
  stores.close();
  other.close();
}

if (pairs.includes("aws")) {
  await withAwsServers(async (config) => {
    const stores = awsStores(config);
    await generate(stores, 8);
    const { token } = await new Tokens(stores.meta).create("bench", "bench");
    const app = createApp({ stores, log: () => {} });
    const time = await timer(app, { Authorization: `Bearer ${token}`, Accept: "text/html" });
    const meta = stores.meta as DynamoMetaStore;
    // Items DynamoDB read for the lists (index items scanned, and list entries a filtered page fetched).
    // The first report files heads from before usage was kept by day (none here: every session
    // was appended with it), once per user: timed apart.
    const started = performance.now();
    const first = await app.request("/v1/insights?from=2025-01-01&to=2025-12-31", {
      headers: { Authorization: `Bearer ${token}` },
    });
    if (first.status !== 200) throw new Error(`first /v1/insights answered ${first.status}`);
    console.log(
      `first /v1/insights of the user (files its heads once): ${(performance.now() - started).toFixed(0)} ms`,
    );
    const daysBefore = meta.usageReads.items;
    const appender = new Appender(stores);
    let appended = 0;
    const insights = await time("/insights?from=2025-01-01&to=2025-12-31", (t) => t.includes("svg class"));
    const results = [
      // Items DynamoDB read for the lists (index items scanned, and list entries a filtered page fetched).
      ...(await listRequests(time, () => meta.listReads.items + meta.listReads.fetched)),
      ["GET /insights (all of 2025)", { ...insights, items: (meta.usageReads.items - daysBefore) / 25 }],
      [
        "GET /v1/insights (all of 2025)",
        await time("/v1/insights?from=2025-01-01&to=2025-12-31", (t) => JSON.parse(t).totals.sessions === SESSIONS),
      ],
      [
        // A new session of 2025 appended before each request: one day of the range moved.
        "GET /insights (all of 2025) after an append",
        await time(
          "/insights?from=2025-01-01&to=2025-12-31",
          (t) => t.includes("svg class"),
          async () => {
            const i = SESSIONS + appended++;
            await appender.append({
              userId: "bench",
              sessionId: `late-${i}`,
              offset: 0,
              body: session(i, `late-${i}`),
            });
          },
        ),
      ],
    ] as Result[];
    // A fresh instance (a new Lambda): nothing of the days parsed yet.
    const fresh: number[] = [];
    for (let i = 0; i < 10; i++) {
      const app = createApp({ stores: awsStores(config), log: () => {} });
      const t = performance.now();
      const answer = await app.request("/insights?from=2025-01-01&to=2025-12-31", {
        headers: { Authorization: `Bearer ${token}`, Accept: "text/html" },
      });
      if (answer.status !== 200) throw new Error(`a fresh instance's /insights answered ${answer.status}`);
      await answer.text();
      fresh.push(performance.now() - t);
    }
    fresh.sort((a, b) => a - b);
    results.push(["GET /insights (all of 2025), a fresh instance's first", { median: fresh[5], p95: fresh[9] }]);
    report("AWS pair: DynamoDB Local + s3rver", results, [...TARGETS, "GET /insights (all of 2025)"]);
    console.log(`items read per request include the filters' choices (the latest 200 sessions); never the ${SESSIONS}`);
  });
}

const TEAM_MEMBERS = Number(process.env.TEAM_MEMBERS ?? 10);
const TEAM_SESSIONS = Number(process.env.TEAM_SESSIONS ?? 1_000);
const TEAM_SAMPLES = Number(process.env.TEAM_SAMPLES ?? 300);

if (pairs.includes("team")) {
  const members = Array.from({ length: TEAM_MEMBERS }, (_, m) => `member-${m}`);
  const dataDir = join(process.cwd(), ".bench", `library-team-v1-${TEAM_MEMBERS}x${TEAM_SESSIONS}`);
  const fresh = !existsSync(dataDir);
  mkdirSync(dataDir, { recursive: true });
  const stores = embeddedStores(dataDir);
  const teams = new Teams(stores.teams, stores.meta);
  const index = new SqliteSearchIndex(join(dataDir, "search.sqlite"), storedLines(stores));
  const teamIndex = new SqliteSearchIndex(join(dataDir, "search-teams.sqlite"), teamLines(stores, stores.teams));
  const teamSearch = new TeamSearch(stores, stores.teams, teamIndex);
  const indexer = new SearchIndexer(stores, index, { users: async () => members });
  const [first] = members as [string];
  let teamId = (await teams.list(first))[0]?.id;
  if (fresh || !teamId) {
    const t = performance.now();
    teamId = (await teams.create(first, "bench")).id;
    for (const member of members.slice(1)) {
      const { token } = await teams.invite(first, teamId);
      await teams.join(member, token);
    }
    const appender = new Appender(stores);
    for (const [m, member] of members.entries()) {
      for (let i = 0; i < TEAM_SESSIONS; i++) {
        // Each member's sessions spread over the year as the library's do, interleaved with the others'.
        const n = i * TEAM_MEMBERS + m;
        const sessionId = `team-${String(n).padStart(6, "0")}`;
        await appender.append({ userId: member, sessionId, offset: 0, body: session(n, sessionId) });
        await teams.setSessionTeam(member, sessionId, teamId);
      }
    }
    console.log(
      `\nteam: generated ${TEAM_MEMBERS} members × ${TEAM_SESSIONS} sessions in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    const indexed = performance.now();
    await indexer.rebuild(members);
    await teamSearch.indexer.catchUp([teamId]);
    await teamSearch.indexer.flush();
    console.log(
      `team: indexed (each member's own, and the team's) in ${((performance.now() - indexed) / 1000).toFixed(1)} s`,
    );
  }
  const { token } = await new Tokens(stores.meta).create(first, "bench");
  const app = createApp({ stores, search: { index, indexer, teams: teamSearch }, log: () => {} });
  const headers = { Authorization: `Bearer ${token}` };
  /**
   * The member's own request and the team's, taken in turns (this machine's load moves: both
   * meet the same), TEAM_SAMPLES of each after 20 to warm up; p95 and median in ms. Requests of
   * a few ms need a few hundred samples: with 40, one collection pause decided the p95.
   */
  const paired = async (
    own: string,
    team: string,
    check: (text: string) => boolean,
  ): Promise<[Result[1], Result[1]]> => {
    const runs: [number[], number[]] = [[], []];
    for (let i = 0; i < TEAM_SAMPLES + 20; i++) {
      for (const [k, path] of [own, team].entries()) {
        const t = performance.now();
        const r = await app.request(path, { headers });
        const text = await r.text();
        const ms = performance.now() - t;
        if (r.status !== 200 || !check(text)) throw new Error(`${path}: ${r.status} ${text.slice(0, 200)}`);
        if (i >= 20) runs[k]?.push(ms);
      }
    }
    const stats = (list: number[]) => {
      list.sort((a, b) => a - b);
      return {
        p95: list[Math.ceil(list.length * 0.95) - 1] as number,
        median: list[Math.floor(list.length / 2)] as number,
      };
    };
    return [stats(runs[0]), stats(runs[1])];
  };
  const query = encodeURIComponent("fix module");
  const [ownPage, teamPage] = await paired(
    "/v1/sessions?limit=50",
    `/v1/teams/${teamId}/sessions?limit=50`,
    (t) => JSON.parse(t).sessions.length === Math.min(50, TEAM_SESSIONS),
  );
  const [ownSearch, teamFound] = await paired(
    `/v1/search?q=${query}`,
    `/v1/search?q=${query}&team=${teamId}`,
    (t) => JSON.parse(t).sessions.length > 0,
  );
  const all = TEAM_MEMBERS * TEAM_SESSIONS;
  const results: Result[] = [
    [`GET /v1/sessions?limit=50 (own first page, ${TEAM_SESSIONS} sessions)`, ownPage],
    [`GET /v1/teams/T/sessions?limit=50 (the team's, ${all} sessions)`, teamPage],
    [`GET /v1/search?q=fix module (own, ${TEAM_SESSIONS} sessions)`, ownSearch],
    [`GET /v1/search?q=fix module&team=T (${all} sessions)`, teamFound],
  ];
  console.log(
    `\nteam of ${TEAM_MEMBERS} members × ${TEAM_SESSIONS} sessions (embedded store), one member's requests in turns with the team's, server time of ${TEAM_SAMPLES} warm requests each:`,
  );
  console.log("| request | median ms | p95 ms |");
  console.log("|---|---|---|");
  for (const [name, r] of results) console.log(`| ${name} | ${r.median.toFixed(1)} | ${r.p95.toFixed(1)} |`);
  for (const [what, team, mine] of [
    ["first page", teamPage, ownPage],
    ["search", teamFound, ownSearch],
  ] as const) {
    const r = team.p95 / mine.p95;
    const median = team.median / mine.median;
    console.log(
      `target: the team's ${what} p95 / own ${what} p95 ≤ 1.5: ${r.toFixed(2)} — ${r <= 1.5 ? "met" : "NOT met"} (medians: ${median.toFixed(2)})`,
    );
  }
  await indexer.flush();
  await teamSearch.indexer.flush();
  index.close();
  teamIndex.close();
  stores.close();
}
