// A sandbox that cannot be set up: always the cause and the fix, never a fallback to running the
// server unconfined.

/** Why a server could not be started in its sandbox. `message` = "sandbox: CAUSE; FIX". */
export class SandboxError extends Error {
  override name = "SandboxError";
  readonly reason: string;
  readonly fix: string;
  constructor(reason: string, fix: string) {
    super(`sandbox: ${reason}; ${fix}`);
    this.reason = reason;
    this.fix = fix;
    // The operator reads this line; a stack adds nothing.
    this.stack = `${this.name}: ${this.message}`;
  }
}

/** The alternative every fix mentions: it is the operator's call, never ours. */
export const OFF_HINT = "or set sandbox: off for this server (it then runs with your full rights)";
