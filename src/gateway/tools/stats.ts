// mcphub_stats: usage of downstream tools for all agents, and for this agent alone.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { JsonObject } from "../../catalog/types.js";
import { queryStats } from "../../telemetry/index.js";
import { lookBackProblem, parseDuration } from "../../util/units.js";
import { errorText } from "../../util/errors.js";
import { jsonResult, parseArgs, type ToolContext } from "./context.js";

const statsArgs = z.strictObject({ since: z.string().optional() });

export async function stats(ctx: ToolContext, raw: unknown): Promise<CallToolResult> {
  const args = parseArgs(statsArgs, raw, '{} or {since: "24h"}');
  let sinceMs: number | undefined;
  if (args.since !== undefined) {
    sinceMs = parseDuration(args.since);
    if (sinceMs === undefined) return jsonResult({ error: `since "${args.since}" is not a duration; use e.g. 90m, 24h or 7d` });
    const problem = lookBackProblem(sinceMs);
    if (problem) return jsonResult({ error: `since "${args.since}" ${problem}, or leave since out for every call retained` });
  }
  try {
    await ctx.hub.telemetry.flush();
    const window = sinceMs !== undefined ? { sinceMs } : {};
    const all = await queryStats(ctx.hub.dataDir, window);
    const mine = await queryStats(ctx.hub.dataDir, { ...window, agent: ctx.view.owner });
    const doc: JsonObject = {
      totals: all.totals as unknown as JsonObject,
      servers: all.servers as unknown as JsonObject[],
      this_agent: {
        agent: ctx.view.owner,
        totals: mine.totals as unknown as JsonObject,
        servers: mine.servers as unknown as JsonObject[],
      },
      ...(args.since !== undefined ? { since: args.since } : {}),
    };
    return jsonResult(doc);
  } catch (err) {
    return jsonResult({ error: `stats unavailable: ${errorText(err)}` });
  }
}
