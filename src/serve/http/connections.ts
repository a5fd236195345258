// Caps on the connections the daemon holds open (config `http_limits`): in total, and per client
// address. A connection past either cap gets one short HTTP answer (429 per address, 503 in
// total) and is closed before a byte of it is parsed, so a client that opens sockets and never
// uses them cannot take the daemon's file descriptors or lock the other clients out. The time
// bounds (head, whole request, idle keep-alive) are Node's own server timeouts, set by the
// listener; this module also says how often Node must look for connections past them.
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { Config } from "../../config/schema.js";

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

export function capConnections(server: Server, limits: () => Limits, warn: (message: string) => void): { close(): void } {
  let total = 0;
  const perAddress = new Map<string, number>();
  let refused = 0;
  let lastLog = 0;

  const refuse = (socket: Socket, status: 429 | 503, message: string): void => {
    refused++;
    const now = Date.now();
    if (now - lastLog >= LOG_EVERY_MS) {
      warn(`http: ${message}; refused ${refused} connection${refused === 1 ? "" : "s"} so far`);
      lastLog = now;
    }
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
    if (mine >= l.max_connections_per_client) {
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
  return { close: () => server.off("connection", onConnection) };
}
