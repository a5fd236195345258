// trusted_proxies: which peers' X-Forwarded-For is believed, and which address in it is the client.
import { describe, expect, it } from "vitest";
import { AddressRanges, cidrProblem, clientAddress } from "../../../src/util/cidr.js";

describe("trusted proxies and X-Forwarded-For", () => {
  const trusted = new AddressRanges(["10.0.0.0/8", "fd00::/8", "192.168.1.7"]);

  it("accepts addresses and CIDR ranges, and says what is wrong with anything else", () => {
    expect(cidrProblem("10.0.0.0/8")).toBeUndefined();
    expect(cidrProblem("::1")).toBeUndefined();
    expect(cidrProblem("10.0.0.0/33")).toBe('"10.0.0.0/33" has a prefix length outside 0-32');
    expect(cidrProblem("lb.internal")).toMatch(/is not an address or CIDR range/);
    expect(trusted.has("::ffff:10.1.2.3")).toBe(true);
    expect(trusted.has("192.168.1.8")).toBe(false);
  });

  it("believes the header only from a trusted peer, read from the right", () => {
    // An untrusted peer: its header is ignored (anyone can write one).
    expect(clientAddress("203.0.113.5", "10.9.9.9", trusted)).toBe("203.0.113.5");
    // A trusted balancer: the client it names.
    expect(clientAddress("10.0.0.10", "198.51.100.4", trusted)).toBe("198.51.100.4");
    // The client wrote its own header; the balancer appended the real address: the rightmost untrusted wins.
    expect(clientAddress("10.0.0.10", "1.2.3.4, 198.51.100.4", trusted)).toBe("198.51.100.4");
    // Two proxies in a row, both trusted: the address before them.
    expect(clientAddress("10.0.0.10", "198.51.100.4, 10.0.0.11", trusted)).toBe("198.51.100.4");
    // A malformed entry stops the walk: nothing left of it is believed.
    expect(clientAddress("10.0.0.10", "1.2.3.4, garbage, 10.0.0.11", trusted)).toBe("10.0.0.11");
    // Repeated headers are one list.
    expect(clientAddress("10.0.0.10", ["1.2.3.4", "198.51.100.9"], trusted)).toBe("198.51.100.9");
    // No trusted proxies configured: always the peer.
    expect(clientAddress("10.0.0.10", "198.51.100.4", new AddressRanges([]))).toBe("10.0.0.10");
  });
});
