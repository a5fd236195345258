// One POST that carries requests, from its arrival until every request in it is answered.
// It starts as "maybe JSON": answers are held and written as one application/json body, which is
// all most calls need. It becomes an SSE stream when something that is not an answer must go out
// first (progress, a forwarded sampling/elicitation/roots request, a log message: whatever the
// server sends with this request as relatedRequestId), at once when a request asked for progress,
// and when the answer is slow (STREAM_AFTER_MS), so that a long call gets keep-alives and, with
// event ids in the session's log, can be resumed after a broken connection.
import type { ServerResponse } from "node:http";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { jsonTextOf } from "../../../util/json/stream.js";
import type { EventLog } from "./events.js";
import { refuseWith } from "./replies.js";
import { SseStream } from "./sse.js";

/** A request still unanswered after this long gets its SSE stream (keep-alives, resumability). */
export const STREAM_AFTER_MS = 1_000;
/** How often waiting JSON answers are checked against STREAM_AFTER_MS. */
const SWEEP_MS = 250;

// Exchanges still waiting to answer as JSON, checked together by one interval, so that a request
// costs no timer of its own (a timer per request showed in the profile). The interval stops after
// a sweep that finds nothing waiting.
const waiting = new Set<Exchange>();
let sweeper: NodeJS.Timeout | undefined;

function sweep(): void {
  if (waiting.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
    return;
  }
  const due = performance.now() - STREAM_AFTER_MS;
  for (const ex of waiting) if (ex.since <= due) ex.slow();
}

function watch(ex: Exchange): void {
  waiting.add(ex);
  if (!sweeper) {
    sweeper = setInterval(sweep, SWEEP_MS);
    sweeper.unref();
  }
}

/** What an exchange needs from its session's transport. */
export interface ExchangeHost {
  readonly sessionId: string | undefined;
  readonly events: EventLog;
  /** Headers of a JSON answer (the session id). */
  readonly jsonHeaders: Record<string, string>;
  /** A fresh event-log key for this exchange's stream; the host maps it back for resumes. */
  openStream(exchange: Exchange): string;
  /** Every request of the exchange has its answer or was cancelled: forget its ids. */
  settled(exchange: Exchange, stream: string | undefined): void;
}

export class Exchange {
  /** Answers by request id; null for a request the client cancelled (it gets no answer). */
  private readonly answers = new Map<RequestId, JSONRPCMessage | null>();
  /** The POST's response while it may still become a JSON answer; undefined once streaming or gone. */
  private res: ServerResponse | undefined;
  private sse: SseStream | undefined;
  /** Event-log key, once streaming. */
  private stream: string | undefined;
  private done = false;
  /** When the request arrived (performance.now()). */
  readonly since = performance.now();

  constructor(
    private readonly host: ExchangeHost,
    res: ServerResponse,
    readonly ids: readonly RequestId[],
    private readonly prime: boolean,
    streamNow: boolean,
  ) {
    this.res = res;
    res.once("close", () => this.detached(res));
    if (streamNow) this.upgrade();
    else watch(this);
  }

  /** A message for this exchange: an answer (`answerTo` set) or something sent along with it. */
  send(message: JSONRPCMessage, answerTo: RequestId | undefined): void {
    if (this.done) return;
    if (answerTo !== undefined) this.answers.set(answerTo, message);
    const complete = this.answers.size === this.ids.length;
    if (this.stream === undefined) {
      if (answerTo === undefined) {
        // The client left before anything was written: there is no stream to start for it.
        if (!this.res) return;
        this.upgrade();
        this.emit(message);
      } else if (complete) {
        this.replyJson();
      }
      return;
    }
    this.emit(message);
    if (complete) this.finish();
  }

  /** The client cancelled `id`: it gets no answer, and the exchange may be complete without one. */
  cancel(id: RequestId): void {
    if (this.done || !this.ids.includes(id) || this.answers.has(id)) return;
    this.answers.set(id, null);
    if (this.answers.size < this.ids.length) return;
    if (this.stream === undefined) this.replyJson();
    else this.finish();
  }

  /** A GET with Last-Event-ID on this exchange's stream: replay what followed, then go on there. */
  resume(res: ServerResponse, after: number): void {
    const stream = this.stream as string;
    this.sse?.end();
    const sse = new SseStream(res, this.host.sessionId);
    this.sse = sse;
    for (const e of this.host.events.after(stream, after)) sse.send(e.data, e.id);
  }

  /** Still unanswered after STREAM_AFTER_MS. */
  slow(): void {
    this.upgrade();
  }

  /** The session is closing: a pending JSON answer becomes a 404 (as for any closed session). */
  abort(): void {
    if (this.done) return;
    this.done = true;
    waiting.delete(this);
    if (this.res && !this.res.destroyed) refuseWith(this.res, "sessionNotFound");
    this.res = undefined;
    this.sse?.end();
  }

  private detached(res: ServerResponse): void {
    if (this.done || this.res !== res) return;
    // Still JSON: the answers that come are dropped. A stream keeps logging for a resume.
    this.res = undefined;
    waiting.delete(this);
  }

  private upgrade(): void {
    if (this.stream !== undefined || this.done) return;
    waiting.delete(this);
    const res = this.res;
    if (!res) return;
    this.res = undefined;
    const stream = this.host.openStream(this);
    this.stream = stream;
    this.sse = new SseStream(res, this.host.sessionId);
    if (this.prime) this.sse.prime(this.host.events.nextId(stream));
    // Answers of a batch that came before the stream started.
    for (const id of this.ids) {
      const a = this.answers.get(id);
      if (a) this.emit(a);
    }
  }

  private emit(message: JSONRPCMessage): void {
    const stream = this.stream as string;
    const data = JSON.stringify(message);
    const id = this.host.events.nextId(stream);
    this.host.events.append(stream, id, data);
    this.sse?.send(data, id);
  }

  private replyJson(): void {
    const res = this.res;
    this.settle();
    if (!res || res.destroyed) return;
    const list: JSONRPCMessage[] = [];
    for (const id of this.ids) {
      const a = this.answers.get(id);
      if (a) list.push(a);
    }
    // Every request was cancelled: nothing to answer, and the POST must still end.
    if (list.length === 0) res.writeHead(202).end();
    else res.writeHead(200, this.host.jsonHeaders).end(list.length === 1 ? messageText(list[0] as JSONRPCMessage) : JSON.stringify(list));
  }

  private finish(): void {
    this.settle();
    const stream = this.stream as string;
    if (this.sse?.open) {
      this.sse.end();
      this.host.events.forget(stream);
    } else {
      // The client lost the stream: the rest waits in the log for its resume.
      this.host.events.markComplete(stream);
    }
  }

  private settle(): void {
    this.done = true;
    waiting.delete(this);
    this.host.settled(this, this.stream);
  }
}

/** The JSON text of an answer, reusing its result's text when it was measured (gateway/call/finalize.ts). */
function messageText(m: JSONRPCMessage): string {
  const result = (m as { result?: unknown }).result;
  const text = result !== null && typeof result === "object" ? jsonTextOf(result) : undefined;
  // Same key order as JSON.stringify({jsonrpc, id, result}), the order the answer is built in.
  if (text !== undefined && Object.keys(m).join() === "jsonrpc,id,result") {
    return `{"jsonrpc":"2.0","id":${JSON.stringify((m as { id: unknown }).id)},"result":${text}}`;
  }
  return JSON.stringify(m);
}

