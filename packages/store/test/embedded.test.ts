import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { embeddedStores } from "../src/embedded/index.js";
import { describeStoreContract } from "./contract.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-embedded-"));
const stores = embeddedStores(dir);
afterAll(() => {
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

describeStoreContract("embedded (files + SQLite)", async () => stores);
