// A request's place in the line shared by every isolate, against the real AdmissionHub Durable Object
// (this project runs in workerd with wrangler.toml's bindings): the hub, not the isolate's ledger,
// counts the slots; its refusal after queue.maxWaitMs; and the fallback to the isolate's own line
// when the hub does not answer.
import { env } from "cloudflare:workers";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";
import { EMPTY_SNAPSHOT, upstreamKey, type HealthSnapshot } from "../../../../src/health/upstream-health.ts";
import type { AdmissionHub } from "../../../../src/routing/admission/admission-hub.ts";
import { AdmissionWait, type WaitOptions } from "../../../../src/routing/admission/admission-wait.ts";
import { resetIsolateState, type IsolateState } from "../../../../src/routing/isolate/isolate-state.ts";
import type { Target } from "../../../../src/routing/target.ts";

const workerEnv = env as unknown as Readonly<Record<string, unknown>>;
let n = 0;
/** A llama target on a closed port, a server of its own per test (and so a hub instance of its own). */
const server = (): Target => ({ kind: "llama", url: `http://127.0.0.1:9/shared-${Date.now()}-${++n}`, name: `S${n}` });
let isolate: IsolateState;
const options = (more: Partial<WaitOptions> = {}): WaitOptions => ({
  state: isolate,
  model: "m",
  key: null,
  priority: 0,
  maxWaitMs: 5000,
  signal: new AbortController().signal,
  env: workerEnv,
  snapshot: () => EMPTY_SNAPSHOT,
  defer: () => {},
  shared: true,
  ...more,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Two servers of one slot in one pool (one hub: every request has both in its plan), the first's slot taken by a request. */
async function homeTaken() {
  const [home, other] = [server(), server()];
  const first = new AdmissionWait([home, other], options({ key: "a" }));
  first.prefer([home, other], []);
  await first.turn();
  expect(first.refuses(home)).toBeUndefined();
  return { home, other, first };
}

describe("the shared admission line", () => {
  beforeEach(() => void (isolate = resetIsolateState()));
  // The first call to the class in this workerd loads it (over a second here): out of the timed tests.
  beforeAll(async () => {
    await (env as unknown as { ADMISSION_HUB: DurableObjectNamespace<import("../../../../src/routing/admission/admission-hub.ts").AdmissionHub> }).ADMISSION_HUB.getByName("warm-up").ping();
  });

  it("counts the slot in the hub: a second request waits though its isolate has nothing in flight, and starts when the first's attempt ends", async () => {
    const s = server();
    const fallbacks = isolate.sharedCounts.fallback;
    const first = new AdmissionWait([s], options({ key: "a" }));
    await first.turn();
    expect(first.refuses(s)).toBeUndefined();
    const second = new AdmissionWait([s], options({ key: "b" }));
    let started = false;
    const turn = second.turn()!.then(() => (started = true));
    await sleep(100);
    expect(started).toBe(false);
    first.attemptEnded(true);
    first.passEnded();
    await turn;
    expect(second.refuses(s)).toBeUndefined();
    second.attemptEnded(true);
    expect(isolate.sharedCounts.fallback).toBe(fallbacks);
  });

  it("refuses with 503 no_capacity and Retry-After once queue.maxWaitMs is over", async () => {
    const s = server();
    const first = new AdmissionWait([s], options());
    await first.turn();
    first.refuses(s);
    const second = new AdmissionWait([s], options({ maxWaitMs: 300 }));
    const t0 = Date.now();
    await expect(second.turn()).rejects.toMatchObject({ status: 503, code: "no_capacity" });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    first.attemptEnded(true);
  });

  it("a grant on one server refuses the plan's others as busy, unasked", async () => {
    const [s1, s2] = [server(), server()];
    const w = new AdmissionWait([s1, s2], options());
    await w.turn();
    const refused = [s1, s2].filter((t) => w.refuses(t) !== undefined);
    expect(refused).toHaveLength(1);
    w.attemptEnded(true);
  });

  it("after a failed attempt the next ask leaves its server out: the request fails over to the plan's next server", async () => {
    const [s1, s2] = [server(), server()];
    const w = new AdmissionWait([s1, s2], options());
    await w.turn();
    const granted = [s1, s2].find((t) => w.refuses(t) === undefined)!;
    w.attemptEnded(false);
    w.passEnded();
    const next = w.afterPass(Object.assign(new ProxyError({ status: 503, code: "no_capacity", retryable: true, busy: true, message: "full" }), { attempts: 1 }), "capacity");
    expect(next).toBeNull();
    await w.turn();
    const other = granted === s1 ? s2 : s1;
    expect(w.refuses(granted)).toBeDefined();
    expect(w.refuses(other)).toBeUndefined();
    w.attemptEnded(true);
  });

  it("after a failed attempt the pass moves on to its next server, if the hub has a slot free there, without a new turn", async () => {
    const [s1, s2] = [server(), server()];
    const w = new AdmissionWait([s1, s2], options());
    w.prefer([s1, s2], []);
    await w.turn();
    expect(w.refuses(s1)).toBeUndefined();
    w.attemptEnded(false);
    expect(await w.refuses(s2)).toBeUndefined();
    // Another request now finds s2 taken and s1 free.
    const other = new AdmissionWait([s1, s2], options());
    other.prefer([s1, s2], []);
    await other.turn();
    expect(other.refuses(s1)).toBeUndefined();
    w.attemptEnded(true);
    other.attemptEnded(true);
  });

  it("grants by the pass's order: a server placement put back goes to nobody while another is free", async () => {
    const [s1, s2] = [server(), server()];
    const w = new AdmissionWait([s1, s2], options());
    w.prefer([s2, s1], [s2]);
    await w.turn();
    expect(w.refuses(s1)).toBeUndefined();
    expect(w.refuses(s2)).toBeDefined();
    w.attemptEnded(true);
  });

  it("a request placement holds for its conversation's home waits at the hub for a slot there while the other server is free, then starts at home", async () => {
    const { home, other, first } = await homeTaken();
    const held = new AdmissionWait([home, other], options({ key: "b" }));
    held.prefer([home, other], [], { target: home, until: Date.now() + 3000 });
    let started = false;
    const turn = held.turn()!.then(() => (started = true));
    await sleep(100);
    expect(started).toBe(false);
    // Another request is granted the free server meanwhile: nobody waits behind the held one.
    const third = new AdmissionWait([home, other], options({ key: "c" }));
    await third.turn();
    expect(third.refuses(other)).toBeUndefined();
    first.attemptEnded(true);
    first.passEnded();
    await turn;
    expect(held.refuses(home)).toBeUndefined();
    held.attemptEnded(true);
    third.attemptEnded(true);
  });

  it("…and once its hold is over, is granted any server's slot", async () => {
    const { home, other, first } = await homeTaken();
    const held = new AdmissionWait([home, other], options({ key: "b" }));
    const asked = Date.now();
    held.prefer([home, other], [], { target: home, until: asked + 400 });
    await held.turn();
    expect(Date.now() - asked).toBeGreaterThanOrEqual(350);
    expect(held.refuses(other)).toBeUndefined();
    expect(held.refuses(home)).toBeDefined();
    held.attemptEnded(true);
    first.attemptEnded(true);
  });

  it("falls back to the isolate's own line, counted, when the hub does not answer within 1 s", async () => {
    const silent = { getByName: () => ({ ask: () => new Promise(() => {}), end: async () => {}, leave: async () => {} }) };
    const before = isolate.sharedCounts.fallback;
    const w = new AdmissionWait([server()], options({ env: { ...workerEnv, ADMISSION_HUB: silent } }));
    const t0 = Date.now();
    await w.turn();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(isolate.sharedCounts.fallback).toBe(before + 1);
  });

  it("with room to spare the hub gives a credit: the next request starts without a call before it, and the hub counts it", async () => {
    const s = server();
    const key = upstreamKey((s as { url: string }).url);
    const snapshot = () => ({ ...EMPTY_SNAPSHOT, upstreams: { [key]: { slotsTotal: 4 } } }) as unknown as HealthSnapshot;
    const calls: string[] = [];
    const hubs = workerEnv.ADMISSION_HUB as DurableObjectNamespace<AdmissionHub>;
    // The real hub, every call to it written down.
    const counted = { getByName: (name: string) => new Proxy(hubs.getByName(name), { get: (stub, m) => (typeof m === "string" && m !== "then" ? (calls.push(m), (...a: unknown[]) => (stub as unknown as Record<string, (...a: unknown[]) => unknown>)[m]!(...a)) : undefined) }) };
    const opts = (more: Partial<WaitOptions> = {}) => options({ snapshot, env: { ...workerEnv, ADMISSION_HUB: counted }, ...more });
    const first = new AdmissionWait([s], opts());
    await first.turn();
    expect(first.refuses(s)).toBeUndefined();
    expect(calls).toEqual(["ask"]);
    const second = new AdmissionWait([s], opts());
    await second.turn();
    expect(second.refuses(s)).toBeUndefined();
    // No call before the start: the hub learns of it after (use), and gives a credit for the next.
    expect(calls).toEqual(["ask", "use"]);
    expect(isolate.sharedCounts).toMatchObject({ granted: 1, credited: 1 });
    await sleep(50);
    const hub = hubs.getByName(`pool:${key}`);
    expect(await hub.stats()).toMatchObject({ grants: 2, credits: 1, lateUses: 0 });
    // A model placed by conversation ("least-busy"), one this isolate has not seen on the server: the
    // hub, which knows where every isolate placed it, chooses. Balanced "ordered" (the default), the
    // first server with a slot is the hub's choice too: the credit serves it.
    const third = new AdmissionWait([s], opts({ conversation: () => "elsewhere", ordered: false }));
    await third.turn();
    expect(calls.at(-1)).toBe("ask");
    expect(third.refuses(s)).toBeUndefined();
    await sleep(50);
    const fourth = new AdmissionWait([s], opts({ conversation: () => "elsewhere" }));
    await fourth.turn();
    expect(calls.at(-1)).toBe("use");
    expect(fourth.refuses(s)).toBeUndefined();
    for (const w of [first, second, third, fourth]) w.attemptEnded(true);
    await sleep(50);
    expect(await hub.stats()).toMatchObject({ grants: 0 });
  });

  it("leaves the isolate's line in charge where the binding is missing or queue.shared is off", () => {
    expect(new AdmissionWait([server()], options({ env: {} })).turn()).toBeNull();
    expect(new AdmissionWait([server()], options({ shared: false })).turn()).toBeNull();
  });
});
