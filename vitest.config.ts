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
    globalSetup: ["scripts/test-servers/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
