// Live updates for open pages: each browser keeps one server-sent-events stream. A push goes out
// shortly after any server or catalogue change (coalesced) and every few seconds anyway, so the
// charts and "x ago" texts move on. Before each push the viewer's right to see it is checked
// again: a revoked token or an ended session closes its stream.
import type { ServerResponse } from "node:http";
import type { Hub } from "../../gateway/index.js";
import type { StatusDocument, Viewer } from "./model.js";

/** Pushes after a change wait this long for more changes (a server starting is several). */
export const CHANGE_DELAY_MS = 150;
export const TICK_MS = 5000;
const MAX_STREAMS = 64;
/** A stream whose reader fell this far behind is closed rather than buffered without end. */
const MAX_BUFFERED_BYTES = 1 << 20;

interface Stream {
  res: ServerResponse;
  viewer: Viewer;
  /** Checked before every push; false ends the stream with a `signed_out` event. */
  allowed: () => Promise<boolean>;
}

export class StatusEvents {
  private readonly streams = new Set<Stream>();
  private timer: NodeJS.Timeout | undefined;
  private tick: NodeJS.Timeout | undefined;
  private pushing: Promise<void> | undefined;
  private again = false;
  private readonly offs: (() => void)[] = [];

  constructor(
    hub: Hub,
    private readonly build: (viewer: Viewer) => Promise<StatusDocument>,
    private readonly onError: (err: unknown) => void,
  ) {
    this.offs.push(hub.supervisor.onChange(() => this.changed()));
    this.offs.push(hub.catalog.onChange(() => this.changed()));
  }

  get size(): number {
    return this.streams.size;
  }

  /** Starts a stream on `res`; false when too many are open (the caller answers 503). */
  open(res: ServerResponse, viewer: Viewer, allowed: () => Promise<boolean>): boolean {
    if (this.streams.size >= MAX_STREAMS) return false;
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      // Proxies must not hold events back.
      "x-accel-buffering": "no",
    });
    res.write("retry: 3000\n\n");
    const stream: Stream = { res, viewer, allowed };
    this.streams.add(stream);
    res.once("close", () => this.streams.delete(stream));
    this.tick ??= setInterval(() => this.changed(0), TICK_MS);
    this.tick.unref();
    void this.pushTo([stream]);
    return true;
  }

  /** Ends every stream (daemon shutdown). */
  close(): void {
    clearTimeout(this.timer);
    clearInterval(this.tick);
    for (const off of this.offs) off();
    for (const s of this.streams) s.res.end();
    this.streams.clear();
  }

  private changed(delay = CHANGE_DELAY_MS): void {
    if (this.streams.size === 0) return;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.pushAll();
    }, delay);
    this.timer.unref();
  }

  private async pushAll(): Promise<void> {
    if (this.pushing) {
      this.again = true;
      return;
    }
    this.pushing = this.pushTo([...this.streams]);
    await this.pushing;
    this.pushing = undefined;
    if (this.again) {
      this.again = false;
      await this.pushAll();
    }
  }

  private async pushTo(streams: Stream[]): Promise<void> {
    // One document per kind of viewer, however many pages show it.
    const docs = new Map<string, Promise<string>>();
    for (const s of streams) {
      try {
        if (!(await s.allowed())) {
          s.res.end("event: signed_out\ndata: {}\n\n");
          this.streams.delete(s);
          continue;
        }
        const key = s.viewer.kind === "agent" ? `agent:${s.viewer.agent}` : "operator";
        let doc = docs.get(key);
        if (!doc) {
          doc = this.build(s.viewer).then((d) => JSON.stringify(d));
          docs.set(key, doc);
        }
        const data = await doc;
        if (s.res.writableEnded || s.res.destroyed) continue;
        if (s.res.writableLength > MAX_BUFFERED_BYTES) {
          s.res.destroy();
          this.streams.delete(s);
          continue;
        }
        s.res.write(`event: status\ndata: ${data}\n\n`);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}
