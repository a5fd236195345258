// The eight management tools' handlers, one module per family (discovery, call_tool, results,
// list_servers, stats), their shared context and argument bounds; this module dispatches them.
// Bad requests and scope refusals become isError
// results with an actionable message; nothing here throws into the MCP server but a WireError
// (a call limit's refusal), which is answered as the JSON-RPC error it is, and call_tool run as a
// task, which answers with the task or a JSON-RPC error.
import { ErrorCode, McpError, type CallToolResult, type CreateTaskResult } from "@modelcontextprotocol/sdk/types.js";
import { errorText } from "../../util/errors.js";
import { WireError } from "../passthrough/index.js";
import type { ManagementTool } from "../management.js";
import { callTool, renderTask, startCallToolTask as startTask } from "./call-tool.js";
import { boundReply, checkArgumentBounds } from "./bounds.js";
import { BadRequest, badRequest, OutOfScope, type ToolContext } from "./context.js";
import { describeTool, resolveTool, searchTools } from "./discovery.js";
import { listServers } from "./list-servers.js";
import { getResult, pollResult } from "./results.js";
import { stats } from "./stats.js";

const HANDLERS: Record<ManagementTool, (ctx: ToolContext, args: unknown) => Promise<CallToolResult>> = {
  list_servers: (ctx) => listServers(ctx),
  search_tools: searchTools,
  describe_tool: describeTool,
  resolve_tool: resolveTool,
  call_tool: callTool,
  get_result: getResult,
  poll_result: pollResult,
  stats,
};

export { renderTask };

/** call_tool as an MCP task, with the same argument bounds; a bad request is a JSON-RPC error (no task starts). */
export async function startCallToolTask(ctx: ToolContext, args: unknown, ttl: number | undefined): Promise<CreateTaskResult> {
  try {
    checkArgumentBounds("call_tool", args);
  } catch (err) {
    if (err instanceof BadRequest) throw new McpError(ErrorCode.InvalidParams, err.message);
    throw err;
  }
  return startTask(ctx, args, ttl);
}

export async function runManagementTool(tool: ManagementTool, ctx: ToolContext, args: unknown): Promise<CallToolResult> {
  let reply: CallToolResult;
  try {
    checkArgumentBounds(tool, args);
    reply = await HANDLERS[tool](ctx, args);
  } catch (err) {
    // A protocol error a handler means as one (a call limit's refusal) crosses as it is.
    if (err instanceof WireError) throw err;
    if (err instanceof BadRequest || err instanceof OutOfScope) reply = badRequest(err.message);
    else {
      ctx.hub.log.error(`${tool} failed: ${errorText(err)}`);
      reply = badRequest(`${tool} failed: ${errorText(err)}`);
    }
  }
  return boundReply(ctx, tool, reply);
}
