import { join } from "node:path";
import type { TestProject } from "vitest/node";
// @ts-expect-error plain ESM helpers shared with the node:test end-to-end suite
import { startFixtureUpstream } from "./fixture-upstream.mjs";
// @ts-expect-error plain ESM helpers shared with the node:test end-to-end suite
import { startLlamaServer } from "./llama-server.mjs";
// @ts-expect-error plain ESM helpers shared with the node:test end-to-end suite
import { llamaCache } from "../../scripts/llama-cache.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    llamaPort: number;
    /** A llama-server with gpt-oss's harmony template, whose parser refuses the random model's output (with --metrics: what it generated). */
    harmonyPort: number;
    fixturePort: number;
  }
}

// Runs in Node before the workerd tests: a real llama-server with the project's tiny model, and the
// fixture upstream for what a real server cannot be made to do.
export default async function setup(project: TestProject) {
  const [llama, harmony, fixtures] = await Promise.all([
    startLlamaServer({ parallel: 4, args: ["-t", "1"] }),
    startLlamaServer({ parallel: 1, args: ["-t", "1", "--metrics", "--jinja", "--chat-template-file", join(llamaCache().templates, "openai-gpt-oss-120b.jinja")] }),
    startFixtureUpstream(),
  ]);
  project.provide("llamaPort", llama.port);
  project.provide("harmonyPort", harmony.port);
  project.provide("fixturePort", fixtures.port);
  return async () => {
    await Promise.all([llama.stop(), harmony.stop(), fixtures.close()]);
  };
}
