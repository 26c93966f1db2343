// End to end: stored responses survive a restart of the deployment. Two `npm start` runs (launcher +
// `wrangler dev`) share one state folder, as one checkout's runs share `.wrangler/state`; a response
// stored by the first is read, listed, chained to and deleted through the second, with the openai
// client, and stays invisible to another credential.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { startFixtureUpstream } from "../support/fixture-upstream.mjs";
import { startSwitchyard } from "../support/switchyard-dev.mjs";

const state = mkdtempSync(join(tmpdir(), "switchyard-state-"));
const fixtures = await startFixtureUpstream();
const vars = { SWITCHYARD_CONFIG: { models: { m: { targets: [{ kind: "llama", url: `${fixtures.url}/behave/say/${encodeURIComponent("Kept across restarts.")}` }] } } } };
const start = () => startSwitchyard({ vars, args: ["--persist-to", state] });
/**
 * A stored response as Switchyard answers it (`store` is part of the API; the SDK's type leaves it out).
 * @typedef {import("openai/resources/responses/responses").Response & { store?: boolean }} StoredResponse
 */

const client = (/** @type {import("../support/switchyard-dev.mjs").Switchyard} */ proxy, apiKey = "sk-dev-alice") => new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey, maxRetries: 0 });

after(async () => {
  await fixtures.close();
  rmSync(state, { recursive: true, force: true });
});

describe("stored responses across a restart", () => {
  it("a response stored before the restart is retrieved, listed and continued after it", async () => {
    let proxy = await start();
    /** @type {StoredResponse} */
    let first;
    try {
      first = await client(proxy).responses.create({ model: "m", input: "Remember me." });
      assert.equal(first.store, true);
    } finally {
      await proxy.stop();
    }

    proxy = await start();
    try {
      const got = await client(proxy).responses.retrieve(first.id);
      assert.equal(got.id, first.id);
      assert.equal(got.output_text, "Kept across restarts.");
      /** @type {Array<{ content?: Array<{ text?: string }> }>} */
      const items = [];
      for await (const item of client(proxy).responses.inputItems.list(first.id)) items.push(/** @type {{ content?: Array<{ text?: string }> }} */ (item));
      assert.deepEqual(items.map((i) => i.content?.[0]?.text), ["Remember me."]);

      const next = await client(proxy).responses.create({ model: "m", input: "Still there?", previous_response_id: first.id });
      assert.ok(/** @type {NonNullable<typeof next.usage>} */ (next.usage).input_tokens >= 0);
      assert.equal(next.previous_response_id, first.id);

      // Another credential sees none of it.
      await assert.rejects(client(proxy, "sk-dev-bob").responses.retrieve(first.id), (e) => e instanceof OpenAI.NotFoundError);
      await client(proxy).responses.delete(first.id);
      await assert.rejects(client(proxy).responses.retrieve(first.id), (e) => e instanceof OpenAI.NotFoundError);
    } finally {
      await proxy.stop();
    }
  });
});
