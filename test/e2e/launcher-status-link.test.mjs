// `npm start` prints a status page link carrying the admin token it generated in the fragment
// (/status.html#admin=<token>, never sent to the server), as the serve link does; the page reads the
// token from it, shows the status, and takes the token out of the address bar.
import { after, before, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { chromium } from "playwright-core";
import { startLauncher } from "../support/switchyard-dev.mjs";

const CHROMIUM = "/usr/bin/chromium";
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;

before(async () => {
  proxy = await startLauncher();
});
after(async () => {
  await proxy?.stop();
});

function statusLink() {
  const m = proxy.logs().match(/status page: (http:\/\/\S+\/status\.html)#admin=([\w-]+)/);
  assert.ok(m, `no status link in:\n${proxy.logs()}`);
  return { page: m[1], token: m[2] };
}

it("the launcher prints the status link with the admin token it generated, on its own port", async () => {
  const { page, token } = statusLink();
  assert.equal(page, `${proxy.url}/status.html`);
  assert.equal(token, readFileSync(`.wrangler/admin-token.${proxy.port}`, "utf8").trim());
  assert.equal((await fetch(`${proxy.url}/v1/admin/status`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
});

it("the status page opened from the link shows the status and clears the fragment", { skip: !existsSync(CHROMIUM) && "chromium is not installed (apt-get install chromium)" }, async () => {
  const { page: url, token } = statusLink();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless=new", "--no-sandbox", "--disable-background-networking", "--no-first-run"] });
  try {
    const page = await browser.newPage();
    /** @type {Array<string | undefined>} */
    const asked = [];
    page.on("request", (r) => {
      if (new URL(r.url()).pathname === "/v1/admin/status") asked.push(r.headers().authorization);
    });
    await page.goto(`${url}#admin=${token}`);
    await page.waitForSelector("#sessions tbody td");
    assert.equal(new URL(page.url()).hash, "", "the token leaves the address bar");
    assert.equal(await page.textContent("#error"), "");
    assert.equal(asked[0], `Bearer ${token}`);
    assert.equal(await page.evaluate(() => sessionStorage.getItem("switchyard-admin-token")), token);
  } finally {
    await browser.close();
  }
});
