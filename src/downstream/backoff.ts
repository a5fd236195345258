// Reconnect delays: capped exponential backoff with full jitter (a uniformly random delay between
// 0 and the capped exponential), so many gateways or servers failing together do not retry in step.
export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 };

/** Delay before retry number `attempt` (0-based). `random` is injectable for tests. */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * exp);
}
