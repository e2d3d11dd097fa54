import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"], externalConditions: ["source"] } },
  test: {
    include: [
      "packages/*/test/**/*.test.ts",
      "functions/*/test/**/*.test.ts",
      "infra/test/**/*.test.ts",
      "scripts/**/*.test.ts",
    ],
    // The MCP SDK's HTTP client imports eventsource-parser, whose `source` export is TypeScript:
    // vite transforms both instead of Node loading them.
    server: { deps: { inline: ["@modelcontextprotocol/sdk", "eventsource-parser"] } },
    globalSetup: ["packages/testing/src/servers/global-setup.ts"],
    // Two test files at a time even on two cores (vitest's default is the cores less one): most
    // of a file's time is spent waiting on child processes and the storage servers.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // The AWS SDK warns once per process that its 2027 releases will need Node 22; ours are pinned.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
  },
});
