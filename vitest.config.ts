import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig } from "vitest/config";
import { workerBundle } from "./test/support/worker-bundle.ts";

// Two layers, both inside workerd:
// - unit: pure logic (parsing, normalization, encoding, tool calls), no upstream;
// - worker (and worker-isolated): the whole Worker against a real llama-server and a fixture server,
//   started in globalSetup, once for both.

const WORKER_TESTS = ["test/workerd", "test/faults", "test/fuzz"];

/**
 * The Worker test files that need a workerd of their own (vitest's isolate, a fresh one a file): those
 * that read the health hub's samples, a target's health or a failover's attempts as if nothing had run
 * before them (an earlier file's dead or slow targets are still watched in a shared one), and those
 * that send to the real llama-servers, whose state an earlier file in the same workerd leaves behind
 * (seen: limits-in-flight answered 502 after hostile-inputs and browser-policy had run).
 */
export const OWN_WORKERD = [
  // health, failover and placement read as fresh
  "test/faults/health-and-circuit.test.ts",
  "test/workerd/api-completions-embeddings.test.ts",
  "test/workerd/context-routing.test.ts",
  "test/workerd/embeddings-failover.test.ts",
  "test/workerd/health-recovery.test.ts",
  "test/workerd/placement.test.ts",
  "test/workerd/request-log.test.ts",
  // the real llama-servers
  "test/workerd/api-messages.test.ts",
  "test/workerd/api-responses.test.ts",
  "test/workerd/auth-routes.test.ts",
  "test/workerd/browser-policy.test.ts",
  "test/workerd/charged-work.test.ts",
  "test/workerd/chat-errors.test.ts",
  "test/workerd/chat-llama.test.ts",
  "test/workerd/chat-parser-refusal.test.ts",
  "test/workerd/chat-tool-calls.test.ts",
  "test/workerd/compressed-bodies.test.ts",
  "test/workerd/hardening-address.test.ts",
  "test/workerd/hardening-config.test.ts",
  "test/workerd/hardening-methods.test.ts",
  "test/workerd/limits-in-flight.test.ts",
  "test/workerd/models.test.ts",
  "test/workerd/sessions.test.ts",
];

let bundled: ReturnType<typeof workerBundle> | undefined;
/** The Worker, bundled once for both projects (test/support/worker-bundle.ts), against the real servers global-setup.ts started (their ports injected). */
const workerPlugins = () => {
  const bundle = (bundled ??= workerBundle(import.meta.dirname, WORKER_TESTS));
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

/** What both Worker projects share: the servers (started once for both) and the timeout. */
const workerTests = { deps: prebundled, globalSetup: ["./test/support/global-setup.ts"], testTimeout: 30_000 };

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
          ...workerTests,
          name: "worker",
          include: WORKER_TESTS.map((dir) => `${dir}/**/*.test.ts`),
          exclude: [...configDefaults.exclude, ...OWN_WORKERD],
          // One workerd for all these files, one after another, instead of one a file: starting one
          // and importing the Worker into it cost ~2.5 CPU-s a file (with all 59 in one, the Worker
          // tests took 186 CPU-s against 362).
          // Their state carries over (module state, Durable Objects, what the health hub watches),
          // which none of them reads as fresh; those that do are in OWN_WORKERD.
          isolate: false,
        },
      },
      {
        plugins: workerPlugins(),
        test: {
          ...workerTests,
          name: "worker-isolated",
          include: OWN_WORKERD,
        },
      },
    ],
  },
});
