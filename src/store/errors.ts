// Errors of the store, for the parts above to tell apart: the shared store cannot be reached
// (PostgreSQL down or restarting: the call that needed it fails with this, and the next one tries
// again), a blob changed under a reader, a read past the end of what is stored.

/** The shared store cannot be reached now. The message says where and why, never a password. */
export class StoreUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreUnavailableError";
  }
}

/** A blob opened at one version was replaced or removed before the read. */
export class BlobChangedError extends Error {
  constructor(key: string) {
    super(`stored blob ${key} changed while it was read`);
    this.name = "BlobChangedError";
  }
}

/** A read asked for bytes past the end of the stored data. */
export class ShortReadError extends Error {
  constructor() {
    super("unexpected end of stored data");
    this.name = "ShortReadError";
  }
}
