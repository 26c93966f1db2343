// Whether a URL's host is one a deployed Worker cannot reach (loopback, private, link-local, ...):
// IPv4 in every form the URL parser accepts, and IPv6 with an IPv4 address inside it (IPv4-mapped,
// IPv4-compatible, NAT64, 6to4) judged by that address (pure).

/**
 * `hostname` as `new URL(...).hostname` gives it: the URL parser has already turned every IPv4
 * spelling (`2130706433`, `0x7f.1`) into dotted decimal and every IPv6 one into its compressed
 * lowercase hex form (`[::ffff:127.0.0.1]` is `[::ffff:7f00:1]`), so only those two forms need reading.
 */
export function isPrivateHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase().replace(/\.$/, "");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  const v4 = parseIpv4(h);
  if (v4) return isPrivateIpv4(v4);
  const v6 = parseIpv6(h);
  return v6 ? isPrivateIpv6(v6) : false;
}

/** Dotted decimal to its four bytes, or null. */
function parseIpv4(h: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  if (!m) return null;
  const bytes = m.slice(1).map(Number);
  return bytes.every((b) => b <= 255) ? bytes : null;
}

function isPrivateIpv4([a, b]: number[]): boolean {
  return (
    a === 0 || // "this network"
    a === 10 ||
    a === 127 ||
    (a === 100 && b! >= 64 && b! <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local
    (a === 172 && b! >= 16 && b! <= 31) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a! >= 224 // multicast and reserved
  );
}

/** An IPv6 address (hex groups, `::`, a trailing dotted IPv4) to its eight 16-bit groups, or null. */
function parseIpv6(h: string): number[] | null {
  if (!h.includes(":") || h.length > 45) return null;
  let text = h;
  // A trailing dotted IPv4 (::ffff:127.0.0.1, as a caller not going through URL may write it) is two groups.
  const dotted = /:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(text);
  if (dotted) {
    const v4 = parseIpv4(dotted[1]!);
    if (!v4) return null;
    text = `${text.slice(0, dotted.index)}:${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (s: string) => (s === "" ? [] : s.split(":"));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return all.map((g) => parseInt(g, 16));
}

/** The IPv4 address in groups 6 and 7 (or `at`, `at + 1`) as four bytes. */
const embedded = (g: number[], at = 6): number[] => [g[at]! >> 8, g[at]! & 0xff, g[at + 1]! >> 8, g[at + 1]! & 0xff];

function isPrivateIpv6(g: number[]): boolean {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return true; // ::
  if (zeros(0, 7) && g[7] === 1) return true; // ::1
  // IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, IPv4-compatible ::a.b.c.d: the IPv4 address decides.
  if (zeros(0, 5) && g[5] === 0xffff) return isPrivateIpv4(embedded(g));
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return isPrivateIpv4(embedded(g));
  if (zeros(0, 6)) return isPrivateIpv4(embedded(g));
  // NAT64 (64:ff9b::/96 well-known, 64:ff9b:1::/48 local use): the IPv4 address it reaches decides; local use is private.
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return isPrivateIpv4(embedded(g));
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return true;
  // 6to4 (2002::/16): the IPv4 address in groups 1 and 2.
  if (g[0] === 0x2002) return isPrivateIpv4(embedded(g, 1));
  const first = g[0]!;
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xffc0) === 0xfec0 || // site-local fec0::/10 (deprecated, still private)
    (first & 0xff00) === 0xff00 // multicast
  );
}
