// Errors the vault raises. Callers branch on the class, never on the message; the messages are
// one line, actionable, and never contain key material or secret values.

/** Any authentication failure: a flipped byte, a swapped or moved chunk, altered metadata, a
 *  truncated or extended file. The vault never returns unauthenticated bytes. */
export class VaultTamperedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VaultTamperedError";
  }
}

/** The data key cannot be unwrapped: the passphrase is missing or wrong, the keychain entry or
 *  key file is gone. The vault never replaces the key in that case (that would orphan data). */
export class VaultLockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VaultLockedError";
  }
}

/** A page was asked for beyond the end of a stored result. Carries the (authenticated) metadata so
 *  the caller can still check scope and report server/tool. */
export class CursorOutOfRangeError<M = unknown> extends RangeError {
  constructor(
    message: string,
    readonly meta: M,
  ) {
    super(message);
    this.name = "CursorOutOfRangeError";
  }
}
