import type { TestProject } from "vitest/node";
// @ts-expect-error plain ESM helpers shared with the node:test end-to-end suite
import { startFixtureUpstream } from "./fixture-upstream.mjs";
// @ts-expect-error plain ESM helpers shared with the node:test end-to-end suite
import { startLlamaServer } from "./llama-server.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    llamaPort: number;
    fixturePort: number;
  }
}

// Runs in Node before the workerd tests: a real llama-server with the project's tiny model, and the
// fixture upstream for what a real server cannot be made to do.
export default async function setup(project: TestProject) {
  const [llama, fixtures] = await Promise.all([startLlamaServer({ parallel: 4, args: ["-t", "1"] }), startFixtureUpstream()]);
  project.provide("llamaPort", llama.port);
  project.provide("fixturePort", fixtures.port);
  return async () => {
    await Promise.all([llama.stop(), fixtures.close()]);
  };
}
