#!/usr/bin/env node
import { main } from "./main.js";

// `pisync ls | head -1`: the reader went away. Nothing more can be shown: end quietly with the
// command's code so far, without a stack trace (any other stream error is still reported).
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(process.exitCode ?? 0);
  });
}

process.exitCode = await main(process.argv.slice(2));
