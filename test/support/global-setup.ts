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

type Servers = { llamaPort: number; harmonyPort: number; fixturePort: number; stop(): Promise<void> };
/** The servers and how many projects use them: both Worker projects run this setup in one vitest process, and share them. */
const shared = globalThis as { switchyardTestServers?: { servers: Promise<Servers>; users: number } };

// Runs in Node before the workerd tests: a real llama-server with the project's tiny model, and the
// fixture upstream for what a real server cannot be made to do.
async function startServers(): Promise<Servers> {
  const [llama, harmony, fixtures] = await Promise.all([
    startLlamaServer({ parallel: 4, args: ["-t", "1"] }),
    startLlamaServer({ parallel: 1, args: ["-t", "1", "--metrics", "--jinja", "--chat-template-file", join(llamaCache().templates, "openai-gpt-oss-120b.jinja")] }),
    startFixtureUpstream(),
  ]);
  return {
    llamaPort: llama.port,
    harmonyPort: harmony.port,
    fixturePort: fixtures.port,
    stop: async () => {
      await Promise.all([llama.stop(), harmony.stop(), fixtures.close()]);
    },
  };
}

export default async function setup(project: TestProject) {
  const entry = (shared.switchyardTestServers ??= { servers: startServers(), users: 0 });
  entry.users++;
  const servers = await entry.servers;
  project.provide("llamaPort", servers.llamaPort);
  project.provide("harmonyPort", servers.harmonyPort);
  project.provide("fixturePort", servers.fixturePort);
  return async () => {
    if (--entry.users > 0) return;
    shared.switchyardTestServers = undefined;
    await servers.stop();
  };
}
