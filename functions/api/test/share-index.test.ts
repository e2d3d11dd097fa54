/**
 * A large session's share on a fresh instance (a new app over the same stores, as a new Lambda
 * instance is): its page and tree come from the persisted tree index, with none of the
 * session's index pages read, and are what the first instance served.
 */
import { newShareKeys, PERSIST_MIN_LINES, type ShareKeys } from "@pisync/core";
import { type Stores, sessionIndexPrefix } from "@pisync/store";
import { countingPages, describeOnEveryStore, line, sessionHeader, userLine } from "@pisync/testing";
import { beforeAll, expect, it } from "vitest";
import { createApp } from "../src/index.js";
import { client, eventually, userToken } from "./harness.js";

describeOnEveryStore("a large share on a fresh instance", (pair, name) => {
  let keys: ShareKeys;
  beforeAll(() => {
    keys = newShareKeys();
  });
  const appOver = (stores: Stores) => createApp({ stores, shareKeys: async () => keys, log: () => {} });

  it("serves the page and the tree from the persisted index, reading no index page", async () => {
    const { stores } = pair();
    const first = appOver(stores);
    const c = client(first, await userToken(stores, "owner"));
    const id = `large-${name}`;
    let text = line(sessionHeader(id));
    for (let n = 1; n <= PERSIST_MIN_LINES + 200; n++) {
      text += userLine(`e${n}`, n === 1 ? null : `e${n - 1}`, n, `question ${n}`);
    }
    expect((await c.patch(id, 0, text)).status).toBe(200);
    const { url } = (await (await c.post(`/v1/sessions/${id}/shares`, {})).json()) as { url: string };
    const path = new URL(url).pathname;
    const page = await (await first.request(path)).text();
    expect(page).toContain(`question ${PERSIST_MIN_LINES + 200}`);
    const tree = await (await first.request(`${path}/tree`)).text();
    // Written after the answer, off the request's path.
    const written = await eventually(
      () => stores.blobs.list(sessionIndexPrefix("owner", id)),
      (listed) => listed.length === 1,
    );
    expect(written).toHaveLength(1);

    const counted = countingPages(stores);
    const fresh = appOver(counted.stores);
    const again = await fresh.request(path);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(page);
    expect(await (await fresh.request(`${path}/tree`)).text()).toBe(tree);
    expect(counted.read.records).toBe(0);
  });
});
