// Run by Bun: oh-my-pi's own SessionManager opens each file given and prints, one JSON line
// per file, the leaf it resumes on and the text of each message of that leaf's context.
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";

const dir = process.env.OMP_PROBE_DIR ?? process.cwd();
for (const file of process.argv.slice(2)) {
  const sm = await SessionManager.open(file, dir);
  const texts = sm
    .buildSessionContext()
    .messages.map((m) => (typeof m.content === "string" ? m.content : (m.content?.[0]?.text ?? null)));
  console.log(JSON.stringify({ leaf: sm.getLeafId(), texts }));
}
