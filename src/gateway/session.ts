// One MCP server session (one harness connection) bound to an agent's view. Uses the SDK's
// low-level Server because the gateway serves raw JSON schemas and a tool list that changes at
// run time. Answers initialize and tools/list from config and the cached catalogue, before any
// downstream is up. After a config reload the session uses the agent's rebuilt view.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Prompt,
  type Resource,
} from "@modelcontextprotocol/sdk/types.js";
import type { ServerListing } from "../catalog/cache/listing.js";
import { splitNamespaced } from "../catalog/names.js";
import { canonicalJson } from "../util/canonical-json.js";
import { VERSION } from "../version.js";
import { downstreamFailure, InvalidArgumentsError, invokeTool } from "./call.js";
import { errorText } from "../util/errors.js";
import type { Hub } from "./hub.js";
import { advertisedName, managementToolFor } from "./management.js";
import { runManagementTool } from "./tools/index.js";
import { jsonResult, type ToolContext } from "./tools/context.js";
import { locateTool } from "./tools/locate.js";
import type { AgentView } from "./view.js";

const HOWTO_URI = "mcphub://howto";

export interface Session {
  server: Server;
  /** Stops listening for catalogue changes; call when the connection ends. */
  dispose(): void;
}

export function createSession(hub: Hub, initialView: AgentView): Session {
  let view = initialView;
  const server = new Server(
    { name: "mcphub", version: VERSION },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { listChanged: true },
        prompts: { listChanged: true },
      },
      instructions: view.instructions,
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: view.advertisement().tools }));

  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const token = extra._meta?.progressToken;
    const ctx: ToolContext = {
      hub,
      view,
      signal: extra.signal,
      ...(token !== undefined
        ? {
            onProgress: (p: { progress: number; total?: number; message?: string }) => {
              void extra
                .sendNotification({ method: "notifications/progress", params: { progressToken: token, ...p } })
                .catch(() => undefined);
            },
          }
        : {}),
    };
    const name = req.params.name;
    const management = managementToolFor(name);
    if (management) return runManagementTool(management, ctx, req.params.arguments);
    return callMounted(ctx, name, req.params.arguments);
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: listResources(hub, view) }));

  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    const uri = req.params.uri;
    if (uri === HOWTO_URI) return { contents: [{ uri, mimeType: "text/markdown", text: howto(view) }] };
    const ref = parseResourceUri(uri);
    if (!ref || !view.scope.allowsServer(ref.server)) {
      throw new McpError(ErrorCode.InvalidParams, `unknown resource ${uri}; list resources to see what is available`);
    }
    try {
      const result = await hub.supervisor.readResource(ref.server, ref.uri, { signal: extra.signal });
      return { ...result, contents: result.contents.map((c) => ({ ...c, uri })) };
    } catch (err) {
      throw new McpError(ErrorCode.InternalError, `read ${uri}: ${errorText(err)}`);
    }
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: listPrompts(hub, view) }));

  server.setRequestHandler(GetPromptRequestSchema, async (req, extra) => {
    const ref = splitNamespaced(req.params.name);
    if (!ref || !view.scope.allowsServer(ref.server)) {
      throw new McpError(ErrorCode.InvalidParams, `unknown prompt ${req.params.name}; list prompts to see what is available`);
    }
    try {
      return await hub.supervisor.getPrompt(ref.server, ref.tool, req.params.arguments, { signal: extra.signal });
    } catch (err) {
      throw new McpError(ErrorCode.InternalError, `get prompt ${req.params.name}: ${errorText(err)}`);
    }
  });

  // list_changed only when what this session advertises really changed, so a harness's prompt
  // cache survives downstream churn that does not touch its listing.
  let toolsPrint = view.advertisement().fingerprint;
  let resourcesPrint = canonicalJson(listResources(hub, view));
  let promptsPrint = canonicalJson(listPrompts(hub, view));
  let scheduled = false;
  const check = () => {
    scheduled = false;
    if (!server.transport) return;
    const t = view.advertisement().fingerprint;
    if (t !== toolsPrint) {
      toolsPrint = t;
      void server.sendToolListChanged().catch(() => undefined);
    }
    const r = canonicalJson(listResources(hub, view));
    if (r !== resourcesPrint) {
      resourcesPrint = r;
      void server.sendResourceListChanged().catch(() => undefined);
    }
    const p = canonicalJson(listPrompts(hub, view));
    if (p !== promptsPrint) {
      promptsPrint = p;
      void server.sendPromptListChanged().catch(() => undefined);
    }
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(check);
  };
  const offCatalog = hub.catalog.onChange(schedule);
  const offSupervisor = hub.supervisor.onChange(schedule);
  const offReload = hub.onReload(() => {
    try {
      view = hub.view(view.agent);
    } catch {
      // The agent left the config: keep the last view; the daemon refuses its next request.
    }
    schedule();
  });
  return {
    server,
    dispose: () => {
      offCatalog();
      offSupervisor();
      offReload();
    },
  };
}

async function callMounted(ctx: ToolContext, name: string, args: unknown): Promise<CallToolResult> {
  const search = advertisedName("search_tools", ctx.view.naming);
  if (!splitNamespaced(name)) {
    throw new McpError(ErrorCode.InvalidParams, `unknown tool "${name}"; downstream tools are named server__tool (try ${search})`);
  }
  let found;
  try {
    found = await locateTool(ctx, undefined, name, { live: true });
  } catch (err) {
    throw new McpError(ErrorCode.InvalidParams, errorText(err));
  }
  if ("doc" in found) {
    throw new McpError(ErrorCode.InvalidParams, `unknown tool "${name}" (${String(found.doc.error)}); try ${search}`);
  }
  try {
    return await invokeTool(ctx.hub, ctx.view, found.entry, args ?? {}, {
      via: "mount",
      signal: ctx.signal,
      ...(ctx.onProgress ? { onProgress: ctx.onProgress } : {}),
    });
  } catch (err) {
    if (err instanceof InvalidArgumentsError) return { ...jsonResult(err.document), isError: true };
    return { content: [{ type: "text", text: downstreamFailure(found.entry.namespaced, err) }], isError: true };
  }
}

function listResources(hub: Hub, view: AgentView): Resource[] {
  const out: Resource[] = [
    { uri: HOWTO_URI, name: "mcphub-howto", title: "How to use this gateway", mimeType: "text/markdown" },
  ];
  for (const [name, listing] of listings(hub, view)) {
    for (const r of listing.resources) {
      out.push({
        ...r,
        uri: `mcphub://${encodeURIComponent(name)}/${encodeURIComponent(r.uri)}`,
        description: `[${name}] ${r.description ?? r.name}`,
      });
    }
  }
  return out;
}

function parseResourceUri(uri: string): { server: string; uri: string } | undefined {
  const m = /^mcphub:\/\/([^/]+)\/(.+)$/.exec(uri);
  if (!m || m[1] === undefined || m[2] === undefined) return undefined;
  try {
    return { server: decodeURIComponent(m[1]), uri: decodeURIComponent(m[2]) };
  } catch {
    return undefined;
  }
}

function listPrompts(hub: Hub, view: AgentView): Prompt[] {
  const out: Prompt[] = [];
  for (const [name, listing] of listings(hub, view)) {
    for (const p of listing.prompts) {
      out.push({ ...p, name: `${name}__${p.name}`, description: `[${name}] ${p.description ?? p.name}` });
    }
  }
  return out;
}

/** In-scope, enabled servers with a listing (live or cached), sorted by name. */
function listings(hub: Hub, view: AgentView): [string, ServerListing][] {
  const out: [string, ServerListing][] = [];
  for (const name of Object.keys(hub.config.servers).sort()) {
    if (!hub.config.servers[name]?.enabled || !view.scope.allowsServer(name)) continue;
    const listing = hub.catalog.listingOf(name);
    if (listing) out.push([name, listing]);
  }
  return out;
}

function howto(view: AgentView): string {
  const n = (t: Parameters<typeof advertisedName>[0]) => advertisedName(t, view.naming);
  return [
    "# Using the mcphub gateway",
    "",
    "Downstream tools are named `server__tool`.",
    "",
    `1. \`${n("resolve_tool")}\` {query: "what you want to do"} recommends one tool with an argument template.`,
    "   Run it only when `status` is `confident`; with `ambiguous`, compare the alternatives or search.",
    `2. \`${n("search_tools")}\` {query} lists ranked candidates; an empty query lists everything.`,
    `3. \`${n("describe_tool")}\` {tool: "server__tool"} shows the full input schema.`,
    `4. \`${n("call_tool")}\` {tool: "server__tool", arguments: {...}} calls it. Add detach: true for long calls and poll with \`${n("poll_result")}\`.`,
    `5. A result over the response budget comes back as a receipt: page it with \`${n("get_result")}\` {callId, cursor: 0}, following nextCursor until done.`,
    "",
  ].join("\n");
}
