// Address ranges (CIDR: 10.0.0.0/8, fd00::/8, or one address) and the client address behind a
// trusted reverse proxy. `X-Forwarded-For` is honoured only when the connection itself comes from
// a trusted proxy, and then read from the right: the first address that is not a trusted proxy is
// the client (anything further left could have been written by the client itself).
import { BlockList, isIP } from "node:net";

/** Why a CIDR entry is not one, or undefined when it is. */
export function cidrProblem(text: string): string | undefined {
  const [addr = "", bits, ...rest] = text.trim().split("/");
  const family = isIP(addr);
  if (family === 0 || rest.length > 0) return `"${text}" is not an address or CIDR range such as 10.0.0.0/8 or fd00::/8`;
  if (bits === undefined) return undefined;
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return `"${text}" has a prefix length outside 0-${max}`;
  return undefined;
}

/** `::ffff:10.0.0.1` (an IPv4 client on a dual-stack socket) as `10.0.0.1`. */
export function plainAddress(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? (m[1] as string) : address;
}

export class AddressRanges {
  private readonly list = new BlockList();
  readonly size: number;

  constructor(cidrs: readonly string[]) {
    for (const c of cidrs) {
      const problem = cidrProblem(c);
      if (problem) throw new Error(problem);
      const [addr = "", bits] = c.trim().split("/");
      const type = isIP(addr) === 4 ? "ipv4" : "ipv6";
      if (bits === undefined) this.list.addAddress(addr, type);
      else this.list.addSubnet(addr, Number(bits), type);
    }
    this.size = cidrs.length;
  }

  has(address: string): boolean {
    const a = plainAddress(address);
    const family = isIP(a);
    return family !== 0 && this.list.check(a, family === 4 ? "ipv4" : "ipv6");
  }
}

/**
 * The client's address: the peer's own, unless the peer is a trusted proxy; then the rightmost
 * address in X-Forwarded-For that is not a trusted proxy (the leftmost when all of them are).
 * A malformed entry stops the walk there: what lies left of it is not trusted.
 */
export function clientAddress(peer: string, forwardedFor: string | string[] | undefined, trusted: AddressRanges): string {
  const direct = plainAddress(peer);
  if (trusted.size === 0 || forwardedFor === undefined || !trusted.has(direct)) return direct;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor)
    .split(",")
    .map((h) => plainAddress(h.trim().replace(/^\[(.*)\](:\d+)?$/, "$1").replace(/^(\d+\.\d+\.\d+\.\d+):\d+$/, "$1")))
    .filter((h) => h !== "");
  let client = direct;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] as string;
    if (isIP(hop) === 0) break;
    client = hop;
    if (!trusted.has(hop)) break;
  }
  return client;
}
