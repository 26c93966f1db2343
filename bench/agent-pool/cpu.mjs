// CPU seconds spent by this process's descendants (Linux /proc), so a bench can say where the
// machine's cores went: the llama-servers, Switchyard's runtime (wrangler, workerd), the bench itself.
import { readdirSync, readFileSync } from "node:fs";

const TICKS = 100; // USER_HZ on Linux

/** pid → { ppid, seconds } of every process readable in /proc. */
function table() {
  /** @type {Map<number, { ppid: number, seconds: number }>} */
  const out = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // The command may hold spaces and parentheses: the fields start after the last ")".
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(name), { ppid: Number(f[1]), seconds: (Number(f[11]) + Number(f[12])) / TICKS });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * CPU seconds so far of each descendant of `root` (not `root` itself).
 * @param {number} [root]
 * @returns {Map<number, number>}
 */
export function descendantsCpu(root = process.pid) {
  const all = table();
  /** @type {Map<number, number>} */
  const out = new Map();
  const children = new Map();
  for (const [pid, p] of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const stack = [...(children.get(root) ?? [])];
  while (stack.length) {
    const pid = stack.pop();
    out.set(pid, all.get(pid)?.seconds ?? 0);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}
