import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storedLines } from "@pisync/core";
import { embeddedStores } from "@pisync/store/embedded";
import { afterAll } from "vitest";
import { SqliteSearchIndex } from "../src/embedded.js";
import { describeSearchContract } from "./contract.js";

const dir = mkdtempSync(join(tmpdir(), "pisync-search-"));
const stores = embeddedStores(join(dir, "store"));
const index = new SqliteSearchIndex(join(dir, "search.db"), storedLines(stores));
afterAll(() => {
  index.close();
  stores.close();
  rmSync(dir, { recursive: true, force: true });
});

describeSearchContract("embedded (SQLite FTS5)", async () => ({ index, stores }));
