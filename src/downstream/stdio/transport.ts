// Our own stdio client transport. The SDK's StdioClientTransport cannot do what a gateway needs:
//  - the child runs in its own process group (detached), so shutdown kills the whole tree,
//    grandchildren included (SIGTERM to the group, SIGKILL after a grace period);
//  - stderr goes into a bounded tail and is never forwarded;
//  - onclose fires as soon as the child exits (not when every inherited pipe closes, which a
//    grandchild holding stdout could delay forever), so in-flight calls fail at once.
// Framing is the SDK's (serializeMessage out; in, the same parse as its deserializeMessage, with
// a hand check for plain result responses: fast-messages.ts).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { parseMessageLine } from "../fast-messages.js";
import { LARGE_MESSAGE_CHARS, releaseMemory } from "../../util/memory.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { TopLevelIdScanner } from "../../util/json/id-scan.js";
import { TickBatcher } from "../../util/tick-batch.js";
import { formatBytes } from "../../util/units.js";
import { planSpawn, type SpawnPlan } from "./spawn-plan.js";
import { TailBuffer } from "./stderr-tail.js";

export interface StdioParams {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** Time between SIGTERM and SIGKILL for the process group. */
  killGraceMs?: number;
  /** Largest single JSON-RPC message accepted from the child. */
  maxMessageBytes?: number;
  /**
   * Data handed to the child on fds 3, 4, ... (each written whole, then closed): how a sandbox
   * launcher receives its seccomp filter without a file.
   */
  extraFds?: Buffer[];
  /** Called once the process tree has ended (a sandbox's private TMPDIR goes then). */
  onEnded?: () => void;
}

const DEFAULT_KILL_GRACE_MS = 2000;
// A bound against a runaway server, far above any real result (results over the response budget
// are stored in the vault, so a large one must still arrive whole), and below V8's string limit.
const DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
/** Decoded parts are joined into one large string every this many bytes (see `runs`). */
const RUN_BYTES = 8 * 1024 * 1024;
/** After the child exits, how long to wait for stdout to drain before reporting the close. */
const EXIT_DRAIN_MS = 100;
const GROUP_POLL_MS = 25;

// Process groups (Windows: process trees) still alive, so a gateway that exits abruptly kills
// them synchronously.
const liveGroups = new Set<number>();
const liveTrees = new Set<number>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const g of liveGroups) signalGroup(g, "SIGKILL");
    for (const pid of liveTrees) spawnSync("taskkill", ["/pid", String(pid), "/T", "/F"], { stdio: "ignore", windowsHide: true });
  });
}
function trackGroup(pgid: number): void {
  liveGroups.add(pgid);
  installExitHook();
}

/** Windows: no process groups; `taskkill /T /F` ends the process and everything it started. */
async function killWindowsTree(pid: number): Promise<void> {
  liveTrees.delete(pid);
  await new Promise<void>((resolve) => {
    const tk = spawn("taskkill", ["/pid", String(pid), "/T", "/F"], { stdio: "ignore", windowsHide: true });
    const timer = setTimeout(resolve, 5000);
    timer.unref();
    tk.once("error", () => resolve());
    tk.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
  // kill(0) also succeeds while only zombies remain (an orphaned grandchild waits for init to
  // reap it, which some container inits do late). Where /proc exists, count only live members.
  return hasProc ? liveMembers(pgid) : true;
}

const hasProc = existsSync("/proc/self/stat");

function liveMembers(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true;
  }
  for (const e of entries) {
    if (e.charCodeAt(0) < 48 || e.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${e}/stat`, "utf8");
    } catch {
      continue; // exited while we looked
    }
    // Fields after "(comm)": state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
  }
  return false;
}

// The steps that touch a whole line (takeLine, parseLine) are functions of their own because V8
// keeps every temporary of an interpreted frame (the array of runs being joined, the line passed
// to the parser, even a value only compared) reachable until the frame returns. Inside the caller,
// the collection that follows would find a 200 MB line's parts, or the line itself, still alive,
// and the next full-size copy would be allocated beside them: measured, peak RSS while storing a
// 200 MB result went from 2.5x to 3.5x of its size depending on which register held what.

/** Takes the next complete line and parses it (message null when there is none). */
function parseLine(lines: string[]): { message: JSONRPCMessage | null; large: boolean } {
  const line = lines.shift();
  if (line === undefined) return { message: null, large: false };
  return { message: parseMessageLine(line), large: line.length >= LARGE_MESSAGE_CHARS };
}

/** SIGTERM the group, wait until it is empty or the grace period ends, then SIGKILL it. */
export async function killProcessGroup(pgid: number, graceMs: number): Promise<void> {
  signalGroup(pgid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, GROUP_POLL_MS));
  }
  if (groupAlive(pgid)) {
    signalGroup(pgid, "SIGKILL");
    // A SIGKILLed group empties promptly; bounded wait so close() really means "gone".
    const hardDeadline = Date.now() + 1000;
    while (groupAlive(pgid) && Date.now() < hardDeadline) {
      await new Promise((r) => setTimeout(r, GROUP_POLL_MS));
    }
  }
  liveGroups.delete(pgid);
}

function streamEnded(stream: NodeJS.ReadableStream | null | undefined, maxMs: number): Promise<void> {
  const s = stream as (NodeJS.ReadableStream & { readableEnded?: boolean; destroyed?: boolean }) | null | undefined;
  if (!s || s.readableEnded || s.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, maxMs);
    timer.unref();
    s.once("end", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  readonly stderrTail = new TailBuffer();
  private child?: ChildProcess;
  /** Text of the line being received, decoded chunk by chunk as it arrives. */
  private parts: string[] = [];
  private partBytes = 0;
  /**
   * Runs of `parts` already joined into large strings. V8 keeps large strings in their own
   * mappings, which a collection returns to the OS at once; thousands of 64 KiB parts would
   * instead stay resident as free heap pages, and the parsed copy of a huge line would be
   * allocated beside them (a third full-size copy in RSS).
   */
  private runs: string[] = [];
  private runBytes = 0;
  private decoder = new StringDecoder("utf8");
  /** Complete lines not yet handed to the SDK. */
  private lines: string[] = [];
  private closeReported = false;
  private draining = false;
  /** Messages queued in this tick, written to the child together when it ends. */
  private readonly input = new TickBatcher((text, done) => this.writeInput(text, done));
  private reaping?: Promise<void>;
  private exitInfo?: { code: number | null; signal: NodeJS.Signals | null };
  /** Set while the rest of an oversized line is being skipped. */
  private skipping?: { scanner: TopLevelIdScanner; bytes: number };
  private plan?: SpawnPlan;

  constructor(private readonly params: StdioParams) {
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** How the child ended, once it has. */
  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    if (this.exitInfo) return this.exitInfo;
    const c = this.child;
    if (c && (c.exitCode !== null || c.signalCode !== null)) return { code: c.exitCode, signal: c.signalCode };
    return undefined;
  }

  start(): Promise<void> {
    if (this.child) throw new Error("stdio transport already started");
    const plan = planSpawn({ command: this.params.command, args: this.params.args, platform: process.platform, env: this.params.env, ...(this.params.cwd ? { cwd: this.params.cwd } : {}) });
    this.plan = plan;
    return new Promise((resolve, reject) => {
      let spawned = false;
      const extra = this.params.extraFds ?? [];
      const child = spawn(plan.file, plan.args, {
        env: this.params.env,
        cwd: this.params.cwd,
        stdio: ["pipe", "pipe", "pipe", ...extra.map(() => "pipe" as const)],
        detached: plan.detached, // POSIX: own process group, so close() can signal the whole tree
        shell: false,
        windowsHide: true,
        windowsVerbatimArguments: plan.windowsVerbatimArguments,
      });
      this.child = child;
      extra.forEach((data, i) => {
        const fd = child.stdio[3 + i] as NodeJS.WritableStream | null | undefined;
        fd?.on("error", () => undefined); // a launcher that died early: its exit says why
        fd?.end(data);
      });
      child.once("spawn", () => {
        spawned = true;
        if (child.pid !== undefined) {
          if (plan.kill === "process-group") trackGroup(child.pid);
          else {
            liveTrees.add(child.pid);
            installExitHook();
          }
        }
        resolve();
      });
      child.on("error", (err) => {
        if (!spawned) {
          this.reportClose();
          this.params.onEnded?.();
          reject(err);
        } else {
          this.onerror?.(err);
        }
      });
      child.once("exit", (code, signal) => {
        this.exitInfo = { code, signal };
        this.onChildExit();
      });
      child.stdin?.on("error", (err) => this.onerror?.(err));
      child.stdout?.on("error", (err) => this.onerror?.(err));
      child.stderr?.on("error", () => {});
      child.stdout?.on("data", (chunk: Buffer) => this.onStdout(chunk));
      child.stdout?.once("close", () => {
        // stdout closed without exit (or the exit drain): nothing more can arrive.
        if (spawned) this.shutdown();
      });
      child.stderr?.on("data", (chunk: Buffer) => this.stderrTail.append(chunk));
    });
  }

  /** One message to the child; the messages of a tick go out in one write (util/tick-batch.ts). */
  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closeReported || !stdin.writable) return Promise.reject(new Error("not connected: the stdio server has exited"));
    return this.input.push(serializeMessage(message));
  }

  private writeInput(text: string, done: (err?: Error) => void): void {
    const stdin = this.child?.stdin;
    if (!stdin || this.closeReported || !stdin.writable) {
      done(new Error("not connected: the stdio server has exited"));
      return;
    }
    if (stdin.write(text)) {
      done();
      return;
    }
    // Back-pressure: wait for drain, but a child that dies meanwhile must not leave us hanging.
    const settle = (err?: Error) => {
      stdin.off("drain", onDrain);
      stdin.off("close", onClose);
      done(err);
    };
    const onDrain = () => settle();
    const onClose = () => settle(new Error("not connected: the stdio server closed its input"));
    stdin.once("drain", onDrain);
    stdin.once("close", onClose);
  }

  /** Ends the session: kills the whole process group and reports the close once. */
  async close(): Promise<void> {
    this.shutdown();
    await this.reaping;
  }

  private onStdout(chunk: Buffer): void {
    // Each chunk is decoded as it arrives and the Buffer let go: a 200 MB result is held once as
    // text while it streams in, not as chunks plus a concatenated copy plus the decoded string.
    const max = this.params.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (this.skipping) {
        // The rest of an oversized line: only its top-level id is kept, never its bytes.
        const piece = chunk.subarray(start, nl === -1 ? chunk.length : nl);
        this.skipping.scanner.feed(piece);
        this.skipping.bytes += piece.length;
        if (nl === -1) break;
        this.endSkippedLine(max);
        start = nl + 1;
        continue;
      }
      if (nl === -1) {
        if (start < chunk.length) {
          this.parts.push(this.decoder.write(chunk.subarray(start)));
          this.partBytes += chunk.length - start;
          this.runBytes += chunk.length - start;
          if (this.runBytes >= RUN_BYTES) {
            this.runs.push(this.parts.join(""));
            this.parts = [];
            this.runBytes = 0;
          }
        }
        if (this.partBytes > max) this.startSkipping();
        break;
      }
      this.completeLine(this.decoder.write(chunk.subarray(start, nl)) + this.decoder.end());
      start = nl + 1;
    }
    this.drain();
  }

  /** The line being received is over the limit: drop what was kept and skip to its end. */
  private startSkipping(): void {
    const scanner = new TopLevelIdScanner();
    for (const text of [...this.runs, ...this.parts]) scanner.feed(Buffer.from(text, "utf8"));
    this.skipping = { scanner, bytes: this.partBytes };
    this.parts = [];
    this.runs = [];
    this.partBytes = 0;
    this.runBytes = 0;
    this.decoder = new StringDecoder("utf8");
    releaseMemory();
  }

  /**
   * An oversized line has ended. A response fails its own request with an error naming the limit
   * (the session and every other call carry on); anything else is reported and dropped.
   */
  private endSkippedLine(max: number): void {
    const skipped = this.skipping;
    this.skipping = undefined;
    if (!skipped) return;
    const head = skipped.scanner.result();
    const what = `a ${formatBytes(skipped.bytes)} message, larger than max_downstream_message_size (${formatBytes(max)})`;
    if (!head.hasMethod && head.id !== null) {
      this.lines.push(
        JSON.stringify({
          jsonrpc: "2.0",
          id: head.id,
          error: { code: -32603, message: `the server answered with ${what}; the answer was dropped (the request may have taken effect)` },
        }),
      );
    } else {
      this.onerror?.(new Error(`the stdio server sent ${what}; it was dropped`));
    }
  }

  /**
   * Queues the line ending with `last`. A method of its own so that no caller's frame keeps the
   * joined line alive while it is parsed (a 200 MB line would otherwise be held twice).
   */
  private completeLine(last: string): void {
    this.parts.push(last);
    let line = this.takeLine();
    const large = this.partBytes >= LARGE_MESSAGE_CHARS;
    this.partBytes = 0;
    this.runBytes = 0;
    // The decoded parts of a huge line are garbage now; free them before it is parsed.
    if (large) releaseMemory();
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.trim() !== "") this.lines.push(line);
  }

  /** Joins the decoded runs and parts of the line just completed and empties them (see parseLine). */
  private takeLine(): string {
    const tail = this.parts.length === 1 ? (this.parts[0] as string) : this.parts.join("");
    const line = this.runs.length === 0 ? tail : [...this.runs, tail].join("");
    this.runs = [];
    this.parts = [];
    return line;
  }

  /**
   * Hands messages over one per microtask. The SDK runs notification handlers one microtask
   * later but responses synchronously, so a progress notification followed by the response in
   * the same read would otherwise be dropped (its handler is gone by the time it runs).
   */
  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    const step = (): void => {
      let message: JSONRPCMessage | null;
      try {
        const next = this.closeReported ? { message: null, large: false } : parseLine(this.lines);
        message = next.message;
        // Parsed: the huge line itself is garbage; free it before the result is processed.
        if (next.large) releaseMemory();
      } catch (err) {
        // A non-JSON line (a server logging to stdout): report it, keep reading.
        this.onerror?.(err as Error);
        queueMicrotask(step);
        return;
      }
      if (message === null) {
        this.draining = false;
        return;
      }
      this.onmessage?.(message);
      queueMicrotask(step);
    };
    step();
  }

  private exitedWithin(ms: number): Promise<void> {
    const child = this.child;
    if (!child || this.exitInfo || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private onChildExit(): void {
    const stdout = this.child?.stdout;
    if (!stdout || stdout.readableEnded || stdout.destroyed) {
      this.shutdown();
      return;
    }
    // Let a response written just before exit drain; a grandchild holding stdout open must not
    // keep the session alive, so the wait is short.
    setTimeout(() => this.shutdown(), EXIT_DRAIN_MS).unref();
  }

  /** Idempotent: kill the group (if any member lives), report close once. */
  private shutdown(): void {
    const child = this.child;
    if (child?.pid !== undefined && this.reaping === undefined) {
      try {
        // Messages queued in this tick still go first.
        this.input.flush();
        child.stdin?.end();
      } catch {
        // ignore: the pipe may already be broken
      }
      const ended = this.plan?.kill === "taskkill" ? killWindowsTree(child.pid) : killProcessGroup(child.pid, this.params.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
      this.reaping = ended
        // Node reaps the leader right after; wait for that so `exit` is known after close().
        .then(() => this.exitedWithin(1000))
        // The last stderr lines often explain a failed start; give them a moment to arrive.
        .then(() => streamEnded(child.stderr, EXIT_DRAIN_MS))
        .finally(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          this.params.onEnded?.();
        });
    }
    this.reportClose();
  }

  private reportClose(): void {
    if (this.closeReported) return;
    this.closeReported = true;
    this.lines = [];
    this.parts = [];
    this.runs = [];
    this.partBytes = 0;
    this.runBytes = 0;
    this.skipping = undefined;
    this.decoder = new StringDecoder("utf8");
    this.onclose?.();
  }
}
