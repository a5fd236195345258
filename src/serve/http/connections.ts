// Caps on the connections the daemon holds open (config `http_limits`): in total, and per client
// address. A connection past either cap gets one short HTTP answer (429 per address, 503 in
// total) and is closed before a byte of it is parsed, so a client that opens sockets and never
// uses them cannot take the daemon's file descriptors or lock the other clients out. The time
// bounds (head, whole request, idle keep-alive) are Node's own server timeouts, set by the
// listener; this module also says how often Node must look for connections past them.
//
// Behind a load balancer every connection comes from the balancer's address, so counting
// connections per address would put all clients under one cap (and a balancer reuses its
// connections for several clients anyway). A peer listed in `trusted_proxies` is therefore exempt
// from the per-address connection cap; instead each request through it is counted, while it is
// open (a streamed answer, an SSE stream), under the client's address from X-Forwarded-For, with
// the same cap. X-Forwarded-For from any other peer is ignored (anyone can write it).
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Config } from "../../config/schema.js";
import { AddressRanges, clientAddress, plainAddress } from "../../util/cidr.js";

type Limits = Config["http_limits"];

/**
 * How often the server looks for connections past header_timeout or request_timeout: a quarter
 * of the shorter one, between 100 ms and 1 s (Node's default, 30 s, would let a slow client stay
 * half a minute past its timeout).
 */
export function checkingInterval(l: Limits): number {
  return Math.min(1000, Math.max(100, Math.floor(Math.min(l.header_timeout, l.request_timeout) / 4)));
}

/** Refused connections are logged at most once a minute (with how many), never once per socket. */
const LOG_EVERY_MS = 60_000;

export interface ConnectionCaps {
  /**
   * Counts a request that came through a trusted proxy under its client's address; false when
   * that client is at its cap (then the 429 is answered here). Requests from other peers pass.
   */
  admit(req: IncomingMessage, res: ServerResponse): boolean;
  close(): void;
}

const NO_PROXIES = new AddressRanges([]);

export function capConnections(server: Server, limits: () => Limits, warn: (message: string) => void, proxies: () => readonly string[] = () => []): ConnectionCaps {
  let total = 0;
  const perAddress = new Map<string, number>();
  const perClient = new Map<string, number>();
  let refused = 0;
  let lastLog = 0;
  // Parsed once per distinct list (a config reload may change it).
  let trustedFor: readonly string[] | undefined;
  let trustedRanges = NO_PROXIES;
  const trusted = (): AddressRanges => {
    const list = proxies();
    if (list !== trustedFor) {
      trustedFor = list;
      trustedRanges = list.length ? new AddressRanges(list) : NO_PROXIES;
    }
    return trustedRanges;
  };

  const note = (message: string): void => {
    refused++;
    const now = Date.now();
    if (now - lastLog >= LOG_EVERY_MS) {
      warn(`http: ${message}; refused ${refused} connection${refused === 1 ? "" : "s"} so far`);
      lastLog = now;
    }
  };

  const refuse = (socket: Socket, status: 429 | 503, message: string): void => {
    note(message);
    const body = JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null });
    const reason = status === 429 ? "Too Many Requests" : "Service Unavailable";
    socket.on("error", () => undefined);
    socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    socket.destroySoon();
  };

  const onConnection = (socket: Socket): void => {
    const l = limits();
    const address = socket.remoteAddress ?? "unknown";
    const mine = perAddress.get(address) ?? 0;
    // A trusted proxy carries many clients: they are counted per request (admit), not here.
    if (mine >= l.max_connections_per_client && !trusted().has(address)) {
      return refuse(socket, 429, `too many connections from ${address} (${l.max_connections_per_client}, http_limits.max_connections_per_client); close some or retry later`);
    }
    if (total >= l.max_connections) {
      return refuse(socket, 503, `too many open connections (${l.max_connections}, http_limits.max_connections); retry later`);
    }
    total++;
    perAddress.set(address, mine + 1);
    socket.once("close", () => {
      total--;
      const n = (perAddress.get(address) ?? 1) - 1;
      if (n <= 0) perAddress.delete(address);
      else perAddress.set(address, n);
    });
  };
  // Before Node's own listener, so a refused socket is ended before its parser sees anything.
  server.prependListener("connection", onConnection);

  const admit = (req: IncomingMessage, res: ServerResponse): boolean => {
    const peer = req.socket.remoteAddress ?? "unknown";
    const ranges = trusted();
    if (!ranges.has(peer)) return true;
    const client = clientAddress(peer, req.headers["x-forwarded-for"], ranges);
    const cap = limits().max_connections_per_client;
    const open = perClient.get(client) ?? 0;
    if (open >= cap) {
      const message = `too many connections from ${client} (${cap}, http_limits.max_connections_per_client; counted per request through the proxy ${plainAddress(peer)}); close some or retry later`;
      note(message);
      const body = JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null });
      res.writeHead(429, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
      return false;
    }
    perClient.set(client, open + 1);
    res.once("close", () => {
      const n = (perClient.get(client) ?? 1) - 1;
      if (n <= 0) perClient.delete(client);
      else perClient.set(client, n);
    });
    return true;
  };
  return { admit, close: () => server.off("connection", onConnection) };
}
