// The eight management tools: their advertised names, titles, small descriptions and final input
// schemas, plus inbound alias resolution. Kept deliberately compact: all eight definitions
// together must stay well under 4 KiB of JSON, because they are in every lazy-mode prompt.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

export const MANAGEMENT_TOOLS = [
  "list_servers",
  "search_tools",
  "describe_tool",
  "resolve_tool",
  "call_tool",
  "get_result",
  "poll_result",
  "stats",
] as const;
export type ManagementTool = (typeof MANAGEMENT_TOOLS)[number];

export type ManagementNaming = "prefixed" | "clean";

const PREFIX = "mcphub_";

export function advertisedName(tool: ManagementTool, naming: ManagementNaming): string {
  return naming === "clean" ? tool : `${PREFIX}${tool}`;
}

const CLEAN = new Set<string>(MANAGEMENT_TOOLS);

/**
 * Maps any accepted inbound spelling to a management tool: the advertised name, the clean name,
 * the host-prefixed form (`mcphub__resolve_tool`) and the legacy stutter (`mcphub__mcphub_resolve_tool`).
 * Returns undefined for anything else, so downstream names pass through untouched.
 */
export function managementToolFor(name: string): ManagementTool | undefined {
  const candidates = [name];
  const hostStripped = name.startsWith("mcphub__") ? name.slice("mcphub__".length) : name;
  candidates.push(hostStripped);
  if (hostStripped.startsWith(PREFIX)) candidates.push(hostStripped.slice(PREFIX.length));
  if (name.startsWith(PREFIX)) candidates.push(name.slice(PREFIX.length));
  for (const c of candidates) if (CLEAN.has(c)) return c as ManagementTool;
  return undefined;
}

type Schema = Tool["inputSchema"];

const obj = (properties: Record<string, object>, required: string[] = []): Schema => ({
  type: "object",
  properties,
  ...(required.length ? { required } : {}),
  additionalProperties: false,
});

const str = (description: string) => ({ type: "string", description });
const int = (description: string) => ({ type: "integer", description });

interface Definition {
  title: string;
  description: string;
  inputSchema: Schema;
  annotations: Tool["annotations"];
  /** Only call_tool runs as an MCP task; the others answer at once (no execution = forbidden). */
  execution?: Tool["execution"];
}

// Hints for clients that ask before running tools: everything here only reads, except call_tool,
// which runs a downstream tool that may change anything, anywhere.
// (Only what differs from the spec's defaults is spelled out, to keep the definitions small.)
const READ_ONLY = { readOnlyHint: true } as const;
const CALLS_ANYTHING = { readOnlyHint: false, destructiveHint: true, openWorldHint: true } as const;

const DEFINITIONS: Record<ManagementTool, Definition> = {
  list_servers: {
    title: "List servers",
    annotations: READ_ONLY,
    description: "Downstream servers behind this gateway: state, tool counts, hints, catalog_revision.",
    inputSchema: obj({}),
  },
  search_tools: {
    title: "Search tools",
    annotations: READ_ONLY,
    description: "Ranked search of the downstream tool catalogue. Empty query lists every tool by name. A match without effect only reads.",
    inputSchema: obj({
      query: str("what you want to do, or a tool name"),
      queries: { type: "array", items: { type: "string" }, maxItems: 10, description: "several queries, merged" },
      max_hits: int("1-100, default 20"),
    }),
  },
  describe_tool: {
    title: "Describe tool",
    annotations: READ_ONLY,
    description: "Full description and input/output schema of one tool (server__tool, or server + tool).",
    inputSchema: obj({ tool: str("server__tool, or the tool when server is given"), server: str("server name") }, ["tool"]),
  },
  resolve_tool: {
    title: "Resolve tool",
    annotations: READ_ONLY,
    description:
      "Recommend the one tool for a goal, with an argument template. Run it only when status is confident. A match without effect only reads.",
    inputSchema: obj({ query: str("the goal or activity, in plain words"), max_hits: int("alternatives, 1-10") }, ["query"]),
  },
  call_tool: {
    title: "Call tool",
    annotations: CALLS_ANYTHING,
    execution: { taskSupport: "optional" },
    description:
      "Call a downstream tool. Large results come back as a stored receipt; detach runs it in the background.",
    inputSchema: obj(
      {
        tool: str("server__tool, or the tool when server is given"),
        server: str("server name"),
        arguments: { type: "object", description: "the tool's arguments" },
        detach: { type: "boolean", description: "return a callId at once; fetch with poll_result" },
        timeout_ms: int("per-call timeout in ms"),
      },
      ["tool"],
    ),
  },
  get_result: {
    title: "Get result",
    annotations: READ_ONLY,
    description:
      'Read a stored result: format "text" for readable pages, find to search it, lines for a range, block for an image or other non-text block (default: base64 JSON pages). Follow nextCursor until done.',
    inputSchema: obj(
      {
        callId: str("from a stored receipt"),
        cursor: int("nextCursor, default 0"),
        format: { type: "string", enum: ["text", "v1"] },
        find: str("text, or /regex/flags"),
        context: int("lines around a match"),
        max_matches: int("up to 100"),
        lines: str('e.g. "120-180"'),
        block: int("content index"),
      },
      ["callId"],
    ),
  },
  poll_result: {
    title: "Poll result",
    annotations: READ_ONLY,
    description: "Status or result of a detached call.",
    inputSchema: obj({ callId: str("from an accepted receipt") }, ["callId"]),
  },
  stats: {
    title: "Stats",
    annotations: READ_ONLY,
    description: "Usage of downstream tools: calls, errors, latency, estimated tokens, for this agent and all.",
    inputSchema: obj({ since: str("window such as 24h or 7d (default: all kept history)") }),
  },
};

/** The eight definitions under their advertised names, in a fixed order. */
export function managementDefinitions(naming: ManagementNaming): Tool[] {
  return MANAGEMENT_TOOLS.map((t) => ({ name: advertisedName(t, naming), ...DEFINITIONS[t] }));
}
