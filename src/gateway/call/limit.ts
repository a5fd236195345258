// The limit stage: the call takes its place among the calls in flight (the Limiter, ../limits)
// right before it is sent, after the user agreed to it: a call waiting for a confirmation is not
// in flight, and its slot on a fragile server is not held while a person decides. A limit that
// refuses the call stops it here with the limit's config key and when to retry; a call over a
// server's concurrent_calls waits in that server's queue when it has room. The place is given
// back by the record stage when the call ends (a detached call's by its background run).
import { isRefusal, type Lease, type LimitRefusal } from "../limits/index.js";
import { entryOf, type CallContext, type CallOutcome } from "./context.js";

export function limit(ctx: CallContext): CallOutcome | undefined | Promise<CallOutcome | undefined> {
  const got = ctx.ports.limits.acquire(ctx.view.owner, entryOf(ctx).server, ctx.signal);
  if (!(got instanceof Promise)) return admitted(ctx, got);
  const queued = performance.now();
  return got.then(
    (a) => {
      ctx.waitMs += performance.now() - queued;
      return admitted(ctx, a);
    },
    (err: unknown): CallOutcome => {
      ctx.waitMs += performance.now() - queued;
      return { kind: "failed", error: err };
    },
  );
}

function admitted(ctx: CallContext, a: Lease | LimitRefusal): CallOutcome | undefined {
  if (isRefusal(a)) return { kind: "limited", message: a.message, refusal: a };
  ctx.lease = a;
  return undefined;
}

/**
 * JSON-RPC error code of a call refused by a limit: in the range JSON-RPC leaves to servers,
 * 429 as in HTTP's Too Many Requests.
 */
export const LIMITED_ERROR_CODE = -32029;

/** The JSON-RPC error a door answers a limited call with: the message, the limit's key and when to retry. */
export function limitErrorData(refusal: LimitRefusal): { limit: string; kind: string; value: number; retry_after_ms: number } {
  return { limit: refusal.key, kind: refusal.kind, value: refusal.value, retry_after_ms: refusal.retryAfterMs };
}
