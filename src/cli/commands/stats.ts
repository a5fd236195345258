// `mcphub stats`: usage from the telemetry day files — calls, errors, estimated tokens and latency,
// per server (and per tool, agent, recent call on request). Reads the configured store (PostgreSQL
// in team mode: every replica's calls), else the data directory, so it works without a config and
// while gateways are running.
import type { Command } from "commander";
import { queryAudit, queryStats, type AuditReport, type StatsQuery, type StatsReport } from "../../telemetry/index.js";
import { formatBytes, formatDuration } from "../../util/units.js";
import { colors, printJson, type CliIO } from "../context.js";
import { example, globalsOf, parsePositiveInt, parseSince, visibleWidth } from "./common.js";
import { configIfAny, withConfiguredStore } from "./shared-store.js";

interface StatsFlags {
  tools?: boolean;
  since?: string;
  server?: string;
  agent?: string;
  recent?: string;
}

export function registerStats(program: Command, io: CliIO): void {
  program
    .command("stats")
    .description("show proxied calls, errors, estimated tokens and latency from telemetry")
    .option("--tools", "add a per-tool breakdown")
    .option("--since <duration>", "only calls in this window, e.g. 90m, 24h, 7d (default: everything retained)")
    .option("--server <name>", "only calls to this server")
    .option("--agent <name>", "only calls made by this agent")
    .option("--recent <n>", "list the N most recent calls")
    .addHelpText("after", example(["mcphub stats --since 24h", "mcphub stats --tools --server github", "mcphub stats --recent 20 --json"]))
    .action(async (flags: StatsFlags, cmd: Command) => {
      const q: StatsQuery = { tools: flags.tools === true };
      const since = parseSince(flags.since);
      if (since !== undefined) q.sinceMs = since;
      if (flags.server !== undefined) q.server = flags.server;
      if (flags.agent !== undefined) q.agent = flags.agent;
      if (flags.recent !== undefined) q.recent = parsePositiveInt("--recent", flags.recent);
      const config = await configIfAny(cmd);
      const { report, audit } = await withConfiguredStore(config, async (store) => ({
        report: await queryStats(store, q),
        // The guardrails' audit trail over the same window: refusals are also calls (above), but
        // confirmations, definition changes and approvals are only here.
        audit: await queryAudit(store, { ...(q.sinceMs !== undefined ? { sinceMs: q.sinceMs } : {}), ...(q.agent !== undefined ? { agent: q.agent } : {}), ...(q.server !== undefined ? { server: q.server } : {}) }, 0),
      }), { follow: false });
      const guard = Object.keys(audit.counts).length > 0 ? audit.counts : undefined;
      if (globalsOf(cmd).json) printJson(io, guard ? { ...report, guardrails: guard } : report);
      else io.out(renderStats(report, q, io, guard));
    });
}

const int = (n: number) => n.toLocaleString("en-US");
/** 559ms, 2.6s, 1m40s: enough precision to compare, short enough for a table. */
function ms(n: number): string {
  if (n < 1000) return `${Math.round(n)}ms`;
  if (n < 60_000) return `${(n / 1000).toFixed(1)}s`;
  return formatDuration(Math.round(n / 1000) * 1000);
}

function pct(part: number, whole: number): string {
  return whole === 0 ? "0%" : `${((100 * part) / whole).toFixed(part === 0 || part === whole ? 0 : 1)}%`;
}

const visible = visibleWidth;

/** A table with numeric columns right-aligned; widths ignore colour codes. */
function table(io: CliIO, header: string[], rows: string[][], numeric: boolean[]): string {
  const c = colors(io);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => visible(r[i] ?? ""))));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => {
        const pad = " ".repeat(Math.max(0, (widths[i] ?? 0) - visible(cell)));
        return numeric[i] ? pad + cell : i === cells.length - 1 ? cell : cell + pad;
      })
      .join("  ")
      .trimEnd();
  return [c.bold(line(header)), ...rows.map(line)].join("\n");
}

const AUDIT_WORDS: [keyof AuditReport["counts"], string, string][] = [
  ["refused", "call refused", "calls refused"],
  ["confirmed", "call confirmed by the user", "calls confirmed by the user"],
  ["declined", "call declined by the user", "calls declined by the user"],
  ["changed", "definition change", "definition changes"],
  ["awaiting_approval", "tool awaiting a first approval", "tools awaiting a first approval"],
  ["approved", "approval", "approvals"],
];

/** One line of guardrail events (docs/guardrails.md#audit-trail), or undefined when there were none. */
function guardLine(counts: AuditReport["counts"] | undefined): string | undefined {
  const parts = AUDIT_WORDS.flatMap(([k, one, many]) => {
    const n = counts?.[k] ?? 0;
    return n > 0 ? [`${int(n)} ${n === 1 ? one : many}`] : [];
  });
  return parts.length ? `guardrails: ${parts.join(", ")}` : undefined;
}

export function renderStats(r: StatsReport, q: StatsQuery, io: CliIO, guard?: AuditReport["counts"]): string {
  const c = colors(io);
  const scope = [
    r.since ? `since ${r.since.slice(0, 16).replace("T", " ")} UTC` : "all retained calls",
    q.server ? `server ${q.server}` : "",
    q.agent !== undefined ? `agent ${q.agent || "(unscoped)"}` : "",
  ]
    .filter(Boolean)
    .join(", ");
  const t = r.totals;
  const guardText = guardLine(guard);
  if (t.calls === 0) return [`No calls recorded (${scope}).`, ...(guardText ? [guardText] : [])].join("\n");
  const out: string[] = [];
  const errors = t.errors > 0 ? c.red(`${int(t.errors)} errors (${pct(t.errors, t.calls)})`) : "0 errors";
  out.push(`${c.bold(`${int(t.calls)} calls`)}, ${errors}, ~${int(t.est_tokens)} est. tokens  ${c.dim(`(${scope})`)}`);
  out.push(
    `latency avg ${ms(t.avg_ms)}` +
      (t.p50_ms !== undefined ? `, p50 ${ms(t.p50_ms)}` : "") +
      (t.p99_ms !== undefined ? `, p99 ${ms(t.p99_ms)}` : "") +
      `; ${formatBytes(t.bytes_in)} arguments sent, ${formatBytes(t.bytes_out)} results received`,
  );
  if (guardText) out.push(guardText);
  out.push(
    "",
    table(
      io,
      ["SERVER", "CALLS", "ERRORS", "EST_TOKENS", "AVG"],
      r.servers.map((s) => [s.server, int(s.calls), int(s.errors), int(s.est_tokens), ms(s.avg_ms)]),
      [false, true, true, true, true],
    ),
  );
  if (r.tools) {
    out.push(
      "",
      table(
        io,
        ["TOOL", "CALLS", "ERRORS", "EST_TOKENS", "AVG"],
        r.tools.map((x) => [x.namespaced, int(x.calls), int(x.errors), int(x.est_tokens), ms(x.avg_ms)]),
        [false, true, true, true, true],
      ),
    );
  }
  if (r.agents && (r.agents.length > 1 || (r.agents[0] && r.agents[0].agent !== ""))) {
    out.push(
      "",
      table(
        io,
        ["AGENT", "CALLS", "ERRORS", "EST_TOKENS"],
        r.agents.map((a) => [a.agent || "(unscoped)", int(a.calls), int(a.errors), int(a.est_tokens)]),
        [false, true, true, true],
      ),
    );
  }
  if (r.recent) {
    out.push(
      "",
      table(
        io,
        ["TIME (UTC)", "TOOL", "AGENT", "VIA", "RESULT", "DURATION", "EST_TOKENS"],
        r.recent.map((x) => [
          x.ts.slice(0, 19).replace("T", " "),
          x.tool,
          x.agent || "-",
          x.via,
          x.ok ? c.green("ok") : c.red(x.error_class ?? "error"),
          ms(x.duration_ms),
          int(x.est_tokens),
        ]),
        [false, false, false, false, false, true, true],
      ),
    );
  }
  return out.join("\n");
}
