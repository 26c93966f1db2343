import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { workerBundle } from "./test/support/worker-bundle.ts";

// Two layers, both inside workerd:
// - unit: pure logic (parsing, normalization, encoding, tool calls), no upstream;
// - worker: the whole Worker against a real llama-server and a fixture server, started in globalSetup.

const WORKER_TESTS = ["test/workerd", "test/faults", "test/fuzz"];

/** The Worker, bundled once (test/support/worker-bundle.ts), against the real servers global-setup.ts started (their ports injected). */
const workerPlugins = () => {
  const bundle = workerBundle(import.meta.dirname, WORKER_TESTS);
  return [bundle.plugin, cloudflareTest(({ inject }) => ({
    wrangler: { configPath: "./wrangler.toml" },
    ...(bundle.main ? { main: bundle.main } : {}),
    miniflare: {
      bindings: {
        LLAMA_URL: `http://127.0.0.1:${inject("llamaPort")}`,
        HARMONY_URL: `http://127.0.0.1:${inject("harmonyPort")}`,
        FIXTURE_URL: `http://127.0.0.1:${inject("fixturePort")}`,
        // A longer or different fuzz run (test/fuzz): FUZZ_RUNS=2000 FUZZ_SEED=7 npx vitest run --project worker test/fuzz
        FUZZ_RUNS: process.env.FUZZ_RUNS ?? "",
        FUZZ_SEED: process.env.FUZZ_SEED ?? "",
        SWITCHYARD_ENV: "dev",
      },
    },
  }))];
};

/**
 * The Worker's dependencies pre-bundled, one module each, instead of the hundreds of files zod, hono
 * and @cfworker/json-schema are made of fetched one by one into every test file's workerd: the Worker tests spent
 * 170 s of their 445 s importing (4 files: 16.5 s of import → 10.2 s).
 */
const prebundled = { optimizer: { ssr: { enabled: true, include: ["zod", "zod/mini", "hono", "hono/cors", "fzstd", "jsonrepair", "@cfworker/json-schema", "eventsource-parser"] } } };

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" }, miniflare: { bindings: { SWITCHYARD_ENV: "dev" } } })],
        test: {
          name: "unit",
          deps: prebundled,
          include: ["test/unit/**/*.test.ts"],
          testTimeout: 15_000,
          // Pure logic keeps no state between files: one workerd for all of them instead of one
          // per file (each costs ~1.5 s to start and import), 4 min → 45 s on two cores.
          isolate: false,
        },
      },
      {
        plugins: workerPlugins(),
        test: {
          name: "worker",
          deps: prebundled,
          include: WORKER_TESTS.map((dir) => `${dir}/**/*.test.ts`),
          globalSetup: ["./test/support/global-setup.ts"],
          testTimeout: 30_000,
          // A workerd each file, as before: tried with one for all (isolate: false, each file given
          // fresh modules and every Durable Object aborted and wiped), files that read the health
          // hub's samples failed now and then after an earlier file (the hub's state is not understood
          // to come back fresh), so the ~3 s a file of starting one stays.
        },
      },
    ],
  },
});
