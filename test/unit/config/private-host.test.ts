import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/config.ts";
import { isPrivateHost } from "../../../src/config/private-host.ts";

/** The host as the configuration check reads it: through the URL parser, which canonicalizes every spelling. */
const hostOf = (url: string) => new URL(url).hostname;

describe("isPrivateHost: a private address in any spelling the URL parser takes", () => {
  it("IPv4-mapped, -translated and -compatible IPv6 are judged by the IPv4 address inside (issue 40, finding 10)", () => {
    for (const url of [
      "http://[::ffff:7f00:1]:8080",
      "http://[::ffff:127.0.0.1]:8080",
      "http://[0:0:0:0:0:ffff:7f00:1]/",
      "http://[::ffff:a00:5]/",
      "http://[::ffff:c0a8:102]/",
      "http://[::ffff:0:7f00:1]/",
      "http://[::7f00:1]/",
      "http://[::127.0.0.1]/",
      "http://[::ffff:a9fe:a9fe]/", // 169.254.169.254, the cloud metadata address
    ]) {
      expect(isPrivateHost(hostOf(url)), url).toBe(true);
    }
    expect(isPrivateHost(hostOf("http://[::ffff:808:808]/"))).toBe(false); // 8.8.8.8
  });

  it("NAT64 and 6to4 reaching a private IPv4 address are private; reaching a public one they are not", () => {
    expect(isPrivateHost(hostOf("http://[64:ff9b::7f00:1]/"))).toBe(true);
    expect(isPrivateHost(hostOf("http://[64:ff9b::10.1.2.3]/"))).toBe(true);
    expect(isPrivateHost(hostOf("http://[64:ff9b:1::1]/"))).toBe(true);
    expect(isPrivateHost(hostOf("http://[2002:7f00:1::]/"))).toBe(true);
    expect(isPrivateHost(hostOf("http://[2002:c0a8:101::1]/"))).toBe(true);
    expect(isPrivateHost(hostOf("http://[64:ff9b::808:808]/"))).toBe(false);
    expect(isPrivateHost(hostOf("http://[2002:808:808::1]/"))).toBe(false);
  });

  it("IPv4 in the forms the URL parser turns into dotted decimal, and the private ranges", () => {
    for (const url of ["http://2130706433/", "http://0x7f.1/", "http://0177.0.0.1/", "http://127.1/", "http://0/", "http://100.64.0.1/", "http://172.31.255.255/", "http://198.18.0.1/", "http://224.0.0.1/", "http://localhost./", "http://a.localhost/"]) {
      expect(isPrivateHost(hostOf(url)), url).toBe(true);
    }
    for (const url of ["http://8.8.8.8/", "http://172.32.0.1/", "http://100.128.0.1/", "https://gpu.example.com/", "https://10.example.com/"]) {
      expect(isPrivateHost(hostOf(url)), url).toBe(false);
    }
  });

  it("IPv6 private ranges: ::, ::1, unique local, link-local, site-local, multicast; a public address is not", () => {
    for (const url of ["http://[::]/", "http://[::1]/", "http://[0:0:0:0:0:0:0:1]/", "http://[fc00::1]/", "http://[fd12:3456::1]/", "http://[fe80::1]/", "http://[febf::1]/", "http://[fec0::1]/", "http://[ff02::1]/"]) {
      expect(isPrivateHost(hostOf(url)), url).toBe(true);
    }
    for (const url of ["http://[2606:4700:4700::1111]/", "http://[2001:db8::1]/"]) {
      expect(isPrivateHost(hostOf(url)), url).toBe(false);
    }
  });

  it("a deployed configuration refuses a router or target at an IPv4-mapped loopback address", () => {
    const routers = parseConfig({ SWITCHYARD_CONFIG: JSON.stringify({ routers: [{ url: "http://[::ffff:7f00:1]:8080" }] }) });
    expect(routers.ok).toBe(false);
    if (!routers.ok) expect(routers.problems[0]).toMatchObject({ field: "SWITCHYARD_CONFIG: routers[0].url" });
    expect(parseConfig({ LLAMA_URL: "http://[::ffff:127.0.0.1]:8080" }).ok).toBe(false);
  });
});
