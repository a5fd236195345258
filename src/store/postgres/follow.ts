// The LISTEN connection: one dedicated client per store that hears `mcphub_docs` notifications and
// refreshes the changed row in the mirror of its space, so a token revoked on one replica is
// refused on every other within the notification's latency. When the connection drops (a
// PostgreSQL restart) the store is "not following": it reconnects with backoff, and on success
// reloads every mirrored space whole, since notifications sent meanwhile are lost. Blob commits and
// removals are notified on the same channel ("results/key"): they go to the blob spaces' stat
// caches (blobs.ts), which are also told when the connection drops or comes back.
import pg from "pg";
import type { DocSpace } from "../types.js";
import { DOC_CHANNEL, type PgMirror } from "./docs.js";

const MAX_BACKOFF_MS = 5000;

/** Hears changes of rows that are not mirrored: `key` undefined means any may have changed. */
export type ChangeListener = (space: string, key: string | undefined) => void;

export class Follower {
  private client: pg.Client | undefined;
  private stopped = false;
  private backoff = 100;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<ChangeListener>();
  following = false;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly mirrors: Map<DocSpace, PgMirror>,
    private readonly log: (level: "info" | "warn" | "error", msg: string) => void,
    private readonly where: string,
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.config);
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    client.on("notification", (n) => {
      if (n.channel !== DOC_CHANNEL || !n.payload) return;
      const slash = n.payload.indexOf("/");
      const space = n.payload.slice(0, slash);
      const mirror = this.mirrors.get(space as DocSpace);
      if (mirror) void mirror.refresh(n.payload.slice(slash + 1));
      else for (const l of this.listeners) l(space, n.payload.slice(slash + 1));
    });
    await client.connect();
    await client.query(`LISTEN ${DOC_CHANNEL}`);
    this.client = client;
    const wasDown = !this.following && this.backoff > 100;
    this.following = true;
    this.backoff = 100;
    // Whatever was heard before this connection may have missed changes.
    for (const l of this.listeners) l("*", undefined);
    if (wasDown) this.log("info", `store: following ${this.where} again`);
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.following = false;
    for (const l of this.listeners) l("*", undefined);
    client.removeAllListeners("end");
    void client.end().catch(() => undefined);
    if (this.stopped) return;
    this.log("warn", `store: lost the notification connection to ${this.where}; shared caches may be stale until it is back`);
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.reconnect();
    }, this.backoff);
    this.timer.unref();
    this.backoff = Math.min(MAX_BACKOFF_MS, this.backoff * 2);
  }

  private async reconnect(): Promise<void> {
    try {
      await this.connect();
      for (const m of this.mirrors.values()) await m.reload();
    } catch {
      this.following = false;
      this.client = undefined;
      this.schedule();
    }
  }

  /** Adds a listener for changes of unmirrored rows; returns its removal. */
  listen(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const c = this.client;
    this.client = undefined;
    this.following = false;
    if (c) {
      c.removeAllListeners("end");
      await c.end().catch(() => undefined);
    }
  }
}
