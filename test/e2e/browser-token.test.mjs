// `npm start` without a SERVE_TOKEN generates one for the run and prints it only inside the page link's
// fragment; that token (and nothing else) may serve.
import { after, before, it } from "node:test";
import assert from "node:assert/strict";
import { startLauncher } from "../support/switchyard-dev.mjs";

/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;
before(async () => {
  proxy = await startLauncher({ env: { SERVE_TOKEN: "" } });
});
after(() => proxy?.stop());

it("prints the page link with a generated serve token that gets a ticket", async () => {
  const m = /serve from this browser: (http:\/\/\S+)\/#serve=([A-Za-z0-9_-]{20,})/.exec(proxy.logs());
  assert.ok(m, `no page link in the launcher output:\n${proxy.logs()}`);
  const token = m[2];
  assert.equal(proxy.logs().split(token).length - 1, 1, "the token is printed once, in the link only");
  const ok = await fetch(`${proxy.url}/v1/sessions/ticket`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
  assert.equal(ok.status, 200);
  assert.match(/** @type {{ ticket: string }} */ (await ok.json()).ticket, /^tk_/);
  const wrong = await fetch(`${proxy.url}/v1/sessions/ticket`, { method: "POST", headers: { authorization: "Bearer guess" } });
  assert.equal(wrong.status, 403);
  const page = await fetch(`${proxy.url}/`);
  assert.match(await page.text(), /Serve this model for the team/);
  assert.equal((await fetch(`${proxy.url}/vendor/web-llm/index.js`, { method: "HEAD" })).status, 200);
});
