import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Two layers, both inside workerd:
// - unit: pure logic (parsing, normalization, encoding, tool calls), no upstream;
// - worker: the whole Worker against a real llama-server and a fixture server, started in globalSetup.
export default defineConfig({
  test: {
    projects: [
      {
        plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" }, miniflare: { bindings: { SWITCHYARD_ENV: "dev" } } })],
        test: { name: "unit", include: ["test/unit/**/*.test.ts"], testTimeout: 15_000 },
      },
      {
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                LLAMA_URL: `http://127.0.0.1:${inject("llamaPort")}`,
                FIXTURE_URL: `http://127.0.0.1:${inject("fixturePort")}`,
                SWITCHYARD_ENV: "dev",
              },
            },
          })),
        ],
        test: {
          name: "worker",
          include: ["test/worker/**/*.test.ts", "test/faults/**/*.test.ts"],
          globalSetup: ["./test/support/global-setup.ts"],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
