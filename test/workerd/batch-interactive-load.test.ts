import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { interactiveWaitingFor } from "../../src/batch/interactive-load.ts";
import { parseConfig } from "../../src/config/config.ts";
import { admissionPlan, sharedServers } from "../../src/routing/admission/admission-wait.ts";
import { admissionLevel } from "../../src/routing/admission/service-class.ts";
import { admissionHub } from "../../src/routing/admission/hub-client.ts";
import { isolateState } from "../../src/routing/isolate/isolate-state.ts";
import { planTargetsFor } from "../../src/routing/plan-targets.ts";
import { FIXTURE_URL } from "./harness.ts";

// The batch runner's "is anyone interactive waiting" (src/batch/interactive-load.ts) against the real
// AdmissionHub Durable Object (wrangler.toml's ADMISSION_HUB): requests of other isolates are asks
// made to the pool's hub directly, as their SharedPlace makes them; the runner sees them there.
const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const e = env as unknown as Env;

function configFor(shared: boolean) {
  const parsed = parseConfig({ ...e, SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/u-bil${tag}` }] } }, queue: { shared } }) });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.config;
}

describe("the batch runner's waiting check across isolates", () => {
  it("counts interactive requests waiting at the pool's AdmissionHub (not batch lines), and this isolate's line with queue.shared off", async () => {
    const config = configFor(true);
    const servers = sharedServers(admissionPlan(planTargetsFor(config, "m", undefined), "m", isolateState().pool));
    expect(servers).not.toBeNull();
    const hub = admissionHub(e, servers!);
    const ask = (id: string, priority: number) => hub.ask({ id: `${tag}:${id}`, model: "m", key: id, priority, plan: servers!, slots: { [servers![0]!]: 1 }, conversation: null });
    expect(await interactiveWaitingFor(e, config, "m")).toEqual({ waiting: 0, from: "hub" });
    // Another isolate's request holds the one slot; a batch line waits: nobody interactive waits yet.
    expect(await ask("held", 0)).toEqual({ server: servers![0] });
    expect(await ask("batch", admissionLevel("batch", 0))).toMatchObject({ queued: true });
    expect(await interactiveWaitingFor(e, config, "m")).toEqual({ waiting: 0, from: "hub" });
    // Two interactive requests of other isolates wait: the runner sees both, though this isolate's line is empty.
    expect(await ask("i1", 0)).toMatchObject({ queued: true });
    expect(await ask("i2", admissionLevel("flex", 0))).toMatchObject({ queued: true });
    expect(isolateState().queue.interactiveWaiting("m")).toBe(0);
    expect(await interactiveWaitingFor(e, config, "m")).toEqual({ waiting: 2, from: "hub" });
    // Admission not shared: this isolate's line, where nobody waits.
    expect(await interactiveWaitingFor(e, configFor(false), "m")).toEqual({ waiting: 0, from: "local" });
    // They leave (their clients went): nobody waits for the runner to defer to.
    await hub.leave(`${tag}:i1`);
    await hub.leave(`${tag}:i2`);
    expect(await interactiveWaitingFor(e, config, "m")).toEqual({ waiting: 0, from: "hub" });
    await hub.leave(`${tag}:batch`);
    await hub.end(`${tag}:held`);
  });
});
