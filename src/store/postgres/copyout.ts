// Reading bytea without the text protocol's hex: node-postgres decodes every result value as a
// UTF-8 string (a 1 MiB chunk arrives as 2 MiB of hex, is decoded to a string and then parsed
// back to bytes), and its `binary: true` mode decodes binary values as UTF-8 too, which corrupts
// bytea. `COPY (SELECT ...) TO STDOUT (FORMAT binary)` sends each row as a CopyData message whose
// bytes pg hands over untouched, so a chunk costs one copy. This is a pg "submittable" (the same
// hook pg-copy-streams uses) that gathers the CopyData messages and parses PostgreSQL's binary
// COPY format: a signature, flags and a header extension, then per row an int16 field count and
// per field an int32 length (-1 for NULL) and the bytes; an int16 -1 ends the data.
import type { PoolClient } from "pg";

const SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");

/** The connection a submittable is handed (only what is used here). */
interface Connection {
  query(text: string): void;
}

/** A `COPY ... TO STDOUT (FORMAT binary)` run on a pg client: resolves with the raw payload. */
class CopyOut {
  private readonly parts: Buffer[] = [];
  private failed = false;
  readonly done: Promise<Buffer>;
  private resolve!: (b: Buffer) => void;
  private reject!: (e: unknown) => void;

  constructor(private readonly text: string) {
    this.done = new Promise<Buffer>((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
  }

  submit(connection: Connection): void {
    connection.query(this.text);
  }

  handleCopyData(msg: { chunk: Buffer }): void {
    // pg's parser reuses its buffer for the next socket read: copy out now.
    this.parts.push(Buffer.from(msg.chunk));
  }

  handleError(err: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.reject(err);
  }

  handleReadyForQuery(): void {
    if (!this.failed) this.resolve(this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts));
  }

  // Messages a COPY TO does not send, answered so the client never stalls on them.
  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
}

/** One field of a row: its bytes (a view into the payload), or null. */
export type CopyField = Buffer | null;

/** Parses a binary COPY payload into rows of fields (views into `data`, no copies). */
export function parseBinaryCopy(data: Buffer): CopyField[][] {
  if (data.length < SIGNATURE.length + 8 || !data.subarray(0, SIGNATURE.length).equals(SIGNATURE)) {
    throw new Error("unexpected answer to a binary COPY (no PGCOPY signature)");
  }
  let at = SIGNATURE.length + 4;
  at += 4 + data.readUInt32BE(at);
  const rows: CopyField[][] = [];
  for (;;) {
    if (at + 2 > data.length) throw new Error("binary COPY ended without its trailer");
    const count = data.readInt16BE(at);
    at += 2;
    if (count === -1) return rows;
    const row: CopyField[] = [];
    for (let i = 0; i < count; i++) {
      const len = data.readInt32BE(at);
      at += 4;
      if (len === -1) {
        row.push(null);
        continue;
      }
      if (at + len > data.length) throw new Error("binary COPY row is cut short");
      row.push(data.subarray(at, at + len));
      at += len;
    }
    rows.push(row);
  }
}

/**
 * Runs `SELECT` (no parameters: COPY takes none, so values must be inlined as literals the
 * caller escaped) on `client` and returns its rows as raw binary fields.
 */
export async function copyRows(client: PoolClient, select: string): Promise<CopyField[][]> {
  const run = new CopyOut(`COPY (${select}) TO STDOUT (FORMAT binary)`);
  // pg accepts any object with submit(); its typings only know Query-shaped ones.
  void client.query(run as unknown as Parameters<PoolClient["query"]>[0]);
  return parseBinaryCopy(await run.done);
}

/** An int8 field as a number (offsets and sizes stay far below 2^53). */
export function int8(field: CopyField): number {
  if (field?.length !== 8) throw new Error("expected an int8 field");
  return Number(field.readBigInt64BE(0));
}
