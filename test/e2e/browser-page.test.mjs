// The serving page in real headless Chromium (Debian's chromium, WebGPU through SwiftShader, no
// shader-f16), against `npm start` with a dead llama.cpp upstream. No model weights exist here, so
// the serving test replaces the vendored web-llm module with test/fakes/fake-web-llm.mjs (only this
// test's route does that; nothing in public/ can select it). The real web-llm module is loaded for
// the capability check, the model list and its error paths (a bogus model id → ModelNotFoundError; a
// self-hosted record whose files this test serves, with a library that does not link → LinkError).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import OpenAI from "openai";
import { chromium } from "playwright-core";
import { DEAD_UPSTREAM } from "../support/llama-server.mjs";
import { startSwitchyard } from "../support/switchyard-dev.mjs";

const CHROMIUM = "/usr/bin/chromium";
const FLAGS = ["--headless=new", "--no-sandbox", "--enable-unsafe-webgpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
const MODEL = "SmolLM2-360M-Instruct-q4f32_1-MLC";
const EMBED = "snowflake-arctic-embed-s-q0f32-MLC-b4";
const TOKEN = "page-serve-token";
/** A self-hosted web-llm record the deployment names (q4f32: listed without shader-f16). */
const OWN = "Switchyard-SelfHosted-q4f32_1-MLC";
const FAKE = new URL("../fakes/fake-web-llm.mjs", import.meta.url).pathname;
const SHOTS = process.env.SWITCHYARD_SCREENSHOTS ?? "/tmp";
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;
/** @type {import("playwright-core").Browser} */
let browser;
/** @type {Awaited<ReturnType<typeof serveMlcFiles>>} */
let mlcFiles;

/**
 * A valid WebAssembly module that imports a function web-llm's runtime does not provide: what a model
 * library built for another web-llm version is to this one (instantiating it throws LinkError).
 */
function libraryOfAnotherVersion() {
  const str = (/** @type {string} */ s) => [s.length, ...Buffer.from(s)];
  const entry = [...str("env"), ...str("switchyard_not_a_model_library"), 0x00, 0x00];
  return Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x02, entry.length + 1, 0x01, ...entry]);
}

/**
 * The team's own model host: mlc-chat-config.json and a model library, with CORS and
 * Cross-Origin-Resource-Policy (the page is cross-origin isolated). Records every request.
 */
async function serveMlcFiles() {
  /** @type {Record<string, { type: string, body: string | Uint8Array }>} */
  const files = {
    "/models/selfhosted/resolve/main/mlc-chat-config.json": { type: "application/json", body: JSON.stringify({ model_type: "qwen2", context_window_size: 2048, tokenizer_files: ["tokenizer.json"] }) },
    "/libs/selfhosted-webgpu.wasm": { type: "application/wasm", body: libraryOfAnotherVersion() },
  };
  /** @type {Array<{ method: string, path: string, origin: string | undefined }>} */
  const requests = [];
  const headers = { "access-control-allow-origin": "*", "cross-origin-resource-policy": "cross-origin" };
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    requests.push({ method: req.method ?? "", path, origin: req.headers.origin });
    const file = files[path];
    if (req.method === "OPTIONS") res.writeHead(204, { ...headers, "access-control-allow-methods": "GET" }).end();
    else if (!file || req.method !== "GET") res.writeHead(404, headers).end();
    else res.writeHead(200, { ...headers, "content-type": file.type }).end(file.body);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  const url = `http://127.0.0.1:${address.port}`;
  return { url, requests, close: () => new Promise((resolve) => server.close(() => resolve(undefined))) };
}

before(async () => {
  // Without Chromium every test below is skipped: start nothing (a server started for none would be left running).
  if (!existsSync(CHROMIUM)) return;
  const dead = DEAD_UPSTREAM;
  mlcFiles = await serveMlcFiles();
  const own = { kind: "browser", model: OWN, mlc: { url: `${mlcFiles.url}/models/selfhosted`, lib: `${mlcFiles.url}/libs/selfhosted-webgpu.wasm` } };
  [proxy, browser] = await Promise.all([
    startSwitchyard({
      vars: {
        SERVE_TOKEN: TOKEN,
        SWITCHYARD_CONFIG: {
          models: {
            team: { targets: [{ kind: "llama", url: dead }, { kind: "browser", model: MODEL }] },
            embed: { targets: [{ kind: "llama", url: dead }, { kind: "browser", model: EMBED }] },
            own: { targets: [{ kind: "llama", url: dead }, own] },
          },
        },
      },
    }),
    chromium.launch({ executablePath: CHROMIUM, args: FLAGS }),
  ]);
});

after(async () => {
  await browser?.close();
  await proxy?.stop();
  await mlcFiles?.close();
});

describe("the page in headless Chromium", { skip: !existsSync(CHROMIUM) && "chromium is not installed (apt-get install chromium)" }, () => {
  it("checks WebGPU, lists q4f32 models, loads, chats, and serves a relayed request end to end", async () => {
    const context = await browser.newContext({ viewport: { width: 900, height: 1100 } });
    await context.route("**/vendor/web-llm/index.js", (route) => route.fulfill({ path: FAKE, contentType: "text/javascript" }));
    const page = await context.newPage();
    await page.goto(`${proxy.url}/#serve=${TOKEN}`);
    await page.waitForSelector("#gpu.ok");
    const sentences = /** @type {string} */ (await page.textContent("#gpu-sentences"));
    assert.match(sentences, /WebGPU works here, with google swiftshader/);
    assert.match(sentences, /does not support 16-bit shaders \(shader-f16\), so only q4f32 models are listed/);
    assert.equal(new URL(page.url()).hash, "", "the token leaves the address bar");
    // The list is filled once web-llm's module has loaded, after the capability check: the Load
    // button is enabled then (reading it at #gpu.ok raced that import on a loaded machine).
    await page.waitForSelector("#load:not([disabled])");
    const options = await page.$$eval("#model option", (os) => os.map((o) => o.value));
    assert.deepEqual(
      options,
      [OWN, "SmolLM2-360M-Instruct-q4f32_1-MLC", "Qwen2.5-0.5B-Instruct-q4f32_1-MLC", "snowflake-arctic-embed-s-q0f32-MLC-b4", "snowflake-arctic-embed-m-q0f32-MLC-b4"],
      "the deployment's self-hosted model, then web-llm's chat models smallest first, then its embedding models",
    );

    await page.selectOption("#model", MODEL);
    await page.click("#load");
    await page.waitForSelector("#loaded:has-text('Loaded:')");
    assert.equal(await page.$eval("#progress", (p) => p.value), 1);
    assert.match(/** @type {string} */ (await page.textContent("#progress-text")), /Finish loading on WebGPU/);

    await page.fill("#prompt", "echo: The chat box streams.");
    await page.click("#chat-form button");
    await page.waitForSelector("#log .assistant:has-text('The chat box streams.')");

    await page.check("#serve");
    await page.waitForSelector("#serve-status:has-text('Serving')");
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "dev", maxRetries: 0 });
    const { data: stream, response } = await client.chat.completions.create({ model: "team", stream: true, messages: [{ role: "user", content: "echo: Answered by a browser tab." }] }).withResponse();
    let text = "";
    /** @type {string | undefined} */
    let servedBy;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? "";
      servedBy ??= /** @type {{ x_switchyard?: { target?: string } }} */ (/** @type {unknown} */ (c)).x_switchyard?.target;
    }
    assert.equal(text, "Answered by a browser tab.");
    // Who served is in the chunk that carries finish_reason; the header too when the first event came
    // within the commit grace (docs/api.md), which a loaded machine does not always give.
    assert.equal(servedBy, `browser:${MODEL}`);
    const header = response.headers.get("x-switchyard-target");
    if (header !== null) assert.equal(header, `browser:${MODEL}`);
    await page.waitForSelector("#stat-served:has-text('1')");
    assert.notEqual(await page.textContent("#stat-rate"), "–");
    // /v1/completions goes to the page's engine.completions.
    const completion = await client.completions.create({ model: "team", prompt: "echo: Completed by a tab.", max_tokens: 20 });
    assert.equal(completion.choices[0].text, "Completed by a tab.");
    // A chat model serves no embeddings: the browser target is skipped (only the dead llama.cpp counts
    // as an attempt, and its error is the one reported).
    const noEmbed = await fetch(`${proxy.url}/v1/embeddings`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "team", input: "x" }) });
    assert.equal(noEmbed.status, 502);
    assert.equal(noEmbed.headers.get("x-switchyard-attempts"), "1");
    await page.screenshot({ path: `${SHOTS}/switchyard-page-serving.png`, fullPage: true });

    await page.uncheck("#serve");
    await page.waitForSelector("#serve-status:has-text('Not serving')");
    const gone = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "team", messages: [{ role: "user", content: "hi" }] }) });
    assert.equal(gone.status, 503);
    await context.close();
  });

  it("a page with an embedding model loaded serves /v1/embeddings (and no chat)", async () => {
    const context = await browser.newContext();
    await context.route("**/vendor/web-llm/index.js", (route) => route.fulfill({ path: FAKE, contentType: "text/javascript" }));
    const page = await context.newPage();
    await page.goto(`${proxy.url}/#serve=${TOKEN}`);
    await page.waitForSelector("#gpu.ok");
    await page.selectOption("#model", EMBED);
    await page.click("#load");
    await page.waitForSelector("#loaded:has-text('embedding model')");
    assert.equal(await page.$eval("#chat", (el) => el.hidden), true);
    await page.check("#serve");
    await page.waitForSelector("#serve-status:has-text('Serving')");
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "dev", maxRetries: 0 });
    const { data, response } = await client.embeddings.create({ model: "embed", input: ["a tab embeds this", "and this"] }).withResponse();
    assert.equal(response.headers.get("x-switchyard-target"), `browser:${EMBED}`);
    assert.equal(data.data.length, 2);
    assert.equal(data.data[0].embedding.length, 384);
    await page.waitForSelector("#stat-served:has-text('1')");
    await page.uncheck("#serve");
    await context.close();
  });

  it("real web-llm: the capability check, the model list, and a bogus model id shown as a sentence", async () => {
    const context = await browser.newContext({ viewport: { width: 900, height: 800 } });
    const page = await context.newPage();
    await page.goto(proxy.url);
    await page.waitForSelector("#gpu.ok");
    await page.waitForSelector("#model option", { state: "attached" });
    const options = await page.$$eval("#model option", (os) => os.map((o) => o.value));
    assert.equal(options[0], "SmolLM2-360M-Instruct-q4f32_1-MLC", "smallest first");
    assert.ok(options.every((id) => !/q\d+f16/.test(id)), "no f16 models without shader-f16");
    await page.click("details summary");
    await page.fill("#custom-model", "bogus-model-id");
    await page.click("#load");
    await page.waitForSelector("#load-error:has-text('ModelNotFoundError')");
    const error = /** @type {string} */ (await page.textContent("#load-error"));
    assert.match(error, /^That did not work: web-llm does not know this model id; pick one from the list\. \(ModelNotFoundError: Cannot find model record in appConfig for bogus-model-id/);
    assert.doesNotMatch(error, /\n\s+at /);
    await page.screenshot({ path: `${SHOTS}/switchyard-page-bogus-model.png`, fullPage: true });
    await context.close();
  });

  it("real web-llm: the deployment's self-hosted record is listed, its config and library fetched from the team's URLs, and a library for another web-llm is one sentence", async () => {
    const context = await browser.newContext({ viewport: { width: 900, height: 800 } });
    const page = await context.newPage();
    mlcFiles.requests.length = 0;
    await page.goto(`${proxy.url}/#serve=${TOKEN}&model=${OWN}&start=1`);
    await page.waitForSelector("#gpu.ok");
    await page.waitForSelector(`optgroup[label="This deployment's web-llm models (WebGPU)"] option[value="${OWN}"]`, { state: "attached" });
    // The link loads it at once: web-llm fetches the record's config, then its library, which does not link.
    await page.waitForSelector("#load-error:has-text('LinkError')", { timeout: 60_000 });
    const error = /** @type {string} */ (await page.textContent("#load-error"));
    assert.match(
      error,
      /^That did not work: the model library is not a web-llm model library for this web-llm version \(v0_2_86\/base\): the model's library \(mlc\.lib in the deployment's configuration\) must be built for it\. \(LinkError: WebAssembly\.instantiate\(\): Import #0 .*switchyard_not_a_model_library.*\)$/,
    );
    assert.doesNotMatch(error, /\n|\.js:\d+/, "one line, no stack trace");
    const gets = mlcFiles.requests.filter((r) => r.method === "GET");
    assert.deepEqual(
      gets.map((r) => r.path),
      ["/models/selfhosted/resolve/main/mlc-chat-config.json", "/libs/selfhosted-webgpu.wasm"],
      "web-llm read the record's config (under resolve/main/) and then its library, nothing else",
    );
    assert.ok(gets.every((r) => r.origin === proxy.url), `fetched by the page, cross-origin: ${JSON.stringify(gets)}`);
    assert.equal(await page.isChecked("#serve"), false, "nothing is served after a failed load");
    await page.screenshot({ path: `${SHOTS}/switchyard-page-self-hosted-mlc.png`, fullPage: true });
    await context.close();
  });

  it("without WebGPU the page says so, offers no web-llm model and downloads nothing; a local GGUF file still can run", async () => {
    const context = await browser.newContext({ viewport: { width: 900, height: 600 } });
    await context.addInitScript(() => delete Object.getPrototypeOf(navigator).gpu);
    const page = await context.newPage();
    /** @type {string[]} */
    const fetched = [];
    page.on("request", (r) => fetched.push(new URL(r.url()).pathname));
    await page.goto(proxy.url);
    await page.waitForSelector("#gpu.bad");
    assert.match(/** @type {string} */ (await page.textContent("#gpu-sentences")), /does not offer WebGPU/);
    await page.waitForSelector("#load:not([disabled])");
    assert.equal(await page.$$eval("#model option", (os) => os.length), 0, "no web-llm model without WebGPU (and no GGUF offered by this deployment)");
    assert.match(/** @type {string} */ (await page.textContent("#models-note")), /open a local \.gguf file/);
    assert.ok(!fetched.includes("/vendor/web-llm/index.js"), "web-llm is not even fetched");
    assert.ok(!fetched.some((p) => p.startsWith("/vendor/wllama/")), "nor llama.cpp, until a GGUF is chosen");
    await page.screenshot({ path: `${SHOTS}/switchyard-page-no-webgpu.png`, fullPage: true });
    await context.close();
  });
});
