/**
 * `push`'s progress: on a terminal one bar redrawn in place (bytes and files); otherwise plain
 * lines, one per file that sent something, that logs and pipes can keep.
 */
import { formatBytes, type Io } from "./common.js";

export interface Progress {
  /** Bytes confirmed so far, of `totalBytes` expected. */
  bytes: number;
  totalBytes: number;
  /** Files done, of `totalFiles`. */
  files: number;
  totalFiles: number;
}

/** One line: `[#####-----]  42%  1.2 MiB of 2.9 MiB  files 3/7`, fitted to `columns`. */
export function progressLine(p: Progress, columns = 80): string {
  const total = Math.max(p.totalBytes, p.bytes);
  const ratio = total > 0 ? p.bytes / total : p.totalFiles > 0 ? p.files / p.totalFiles : 1;
  const percent = `${Math.floor(ratio * 100)}%`.padStart(4);
  const text = `${percent}  ${formatBytes(p.bytes)} of ${formatBytes(total)}  files ${p.files}/${p.totalFiles}`;
  const width = Math.max(10, Math.min(40, columns - text.length - 4));
  const filled = Math.round(ratio * width);
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${text}`;
}

/** Draws progress on stderr: redrawn at most every `intervalMs` on a terminal, silent otherwise. */
export class ProgressBar {
  private lastDraw = 0;
  private drawn = false;

  constructor(
    private readonly io: Io,
    private readonly intervalMs = 80,
  ) {}

  /** Redraws the bar (a terminal only); `force` draws even within the interval. */
  update(p: Progress, force = false): void {
    if (!this.io.isTTY) return;
    const now = Date.now();
    if (!force && this.drawn && now - this.lastDraw < this.intervalMs) return;
    this.lastDraw = now;
    this.drawn = true;
    this.io.err(`\r${progressLine(p, this.io.columns || 80)}\x1b[K`);
  }

  /** A message above the bar (a line of its own everywhere). */
  say(line: string): void {
    this.io.err(this.io.isTTY && this.drawn ? `\r\x1b[K${line}\n` : `${line}\n`);
    this.drawn = false;
  }

  /** Leaves the bar's last state on its line (`keep`), or wipes it (nothing happened worth keeping). */
  finish(p: Progress, keep: boolean): void {
    if (!this.io.isTTY) return;
    if (keep) {
      this.update(p, true);
      this.io.err("\n");
    } else if (this.drawn) this.io.err("\r\x1b[K");
    this.drawn = false;
  }
}
