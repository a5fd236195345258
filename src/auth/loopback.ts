// The loopback redirect listener of a sign-in (RFC 8252 §7.3): an HTTP server on 127.0.0.1 that
// receives the authorization server's redirect with the code. It answers only its own path on its
// own Host (a page in another tab cannot reach it through DNS rebinding), accepts only the state
// of the flow it belongs to, and keeps the first valid answer even if it arrives before anyone
// waits for it. The code is never echoed into the page.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export const CALLBACK_PATH = "/callback";

export class PortInUseError extends Error {
  override name = "PortInUseError";
}

export type CallbackOutcome = { code: string } | { error: string; description?: string };

export interface LoopbackListener {
  port: number;
  redirectUrl: string;
  /** Only a redirect carrying this state is accepted. */
  expectState(state: string): void;
  /** The code (or the authorization server's error) of the first redirect with the expected state. */
  wait(timeoutMs: number, signal?: AbortSignal): Promise<CallbackOutcome>;
  close(): Promise<void>;
}

export async function listenLoopback(port: number, label: string): Promise<LoopbackListener> {
  let expected: string | undefined;
  let outcome: CallbackOutcome | undefined;
  let settle: ((o: CallbackOutcome) => void) | undefined;
  const server: Server = createServer((req, res) => {
    const reply = (status: number, title: string, body: string) => {
      res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "referrer-policy": "no-referrer" });
      res.end(page(title, body));
    };
    if (!hostAllowed(req, actualPort)) return reply(421, "Wrong host", "This address only answers mcphub's sign-in redirect.");
    const url = new URL(req.url ?? "/", `http://127.0.0.1:${actualPort}`);
    if (req.method !== "GET" || url.pathname !== CALLBACK_PATH) return reply(404, "Not found", "Nothing here.");
    if (outcome !== undefined) return reply(200, "Already done", `The sign-in to ${escapeHtml(label)} is already complete. You can close this tab.`);
    const state = url.searchParams.get("state");
    if (expected === undefined || state !== expected) {
      return reply(400, "Sign-in not accepted", "This redirect does not belong to the sign-in mcphub is waiting for (state mismatch). Start again with <code>mcphub auth login</code>.");
    }
    const error = url.searchParams.get("error");
    const code = url.searchParams.get("code");
    if (error !== null) {
      const description = url.searchParams.get("error_description") ?? undefined;
      finish(description !== undefined ? { error, description } : { error });
      return reply(400, "Sign-in refused", `The authorization server answered <code>${escapeHtml(error)}</code>${description ? `: ${escapeHtml(description)}` : ""}. You can close this tab.`);
    }
    if (code === null || code === "") return reply(400, "Sign-in not accepted", "The redirect carries no authorization code.");
    finish({ code });
    reply(200, "Signed in", `mcphub received the sign-in for ${escapeHtml(label)}. You can close this tab and return to the terminal.`);
  });
  const finish = (o: CallbackOutcome) => {
    outcome = o;
    settle?.(o);
  };
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => reject(err.code === "EADDRINUSE" ? new PortInUseError(`port ${port} on 127.0.0.1 is in use`) : err));
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const actualPort = (server.address() as AddressInfo).port;
  return {
    port: actualPort,
    redirectUrl: `http://127.0.0.1:${actualPort}${CALLBACK_PATH}`,
    expectState(state) {
      expected = state;
    },
    wait(timeoutMs, signal) {
      if (outcome !== undefined) return Promise.resolve(outcome);
      return new Promise<CallbackOutcome>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer from the browser within ${Math.round(timeoutMs / 1000)}s`)), timeoutMs);
        const onAbort = () => reject(new Error("sign-in cancelled"));
        signal?.addEventListener("abort", onAbort, { once: true });
        settle = (o) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve(o);
        };
      });
    },
    close() {
      return new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

function hostAllowed(req: IncomingMessage, port: number): boolean {
  const host = (req.headers.host ?? "").toLowerCase();
  return host === `127.0.0.1:${port}` || host === `localhost:${port}`;
}

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>mcphub: ${title}</title></head><body style="font-family:sans-serif;max-width:40em;margin:4em auto"><h1>${title}</h1><p>${body}</p></body></html>`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

