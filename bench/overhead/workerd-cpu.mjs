// CPU time of the workerd processes a benchmark started, from Linux's per-thread schedstat: what a
// Worker costs the runtime, client and upstream excluded (performance.now() inside a Worker only
// advances on I/O, so it cannot measure this itself).
import { readFileSync, readdirSync } from "node:fs";

/** @param {string} pid */
const parentOf = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[1] ?? null;
  } catch {
    return null;
  }
};

/** The workerd processes this process started (directly, or through wrangler dev or Miniflare). */
export const workerdPids = () =>
  new Set(
    readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          if (readFileSync(`/proc/${p}/comm`, "utf8").trim() !== "workerd") return false;
        } catch {
          return false;
        }
        for (let q = parentOf(p); q && q !== "0" && q !== "1"; q = parentOf(q)) if (q === String(process.pid)) return true;
        return false;
      }),
  );

/**
 * Nanoseconds on CPU of all the process's threads so far (/proc/<pid>/task/<tid>/schedstat).
 * @param {string} pid
 */
export const cpuNs = (pid) => {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {}
  }
  return ns;
};
