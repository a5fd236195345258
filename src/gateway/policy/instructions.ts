// The `instructions` string returned by `initialize`. In lazy mode most downstream tools are not in
// tools/list, so this text is what tells a model that they exist and how to reach them. It is
// fixed for the life of a gateway process and stays under 4 KiB (local-agent caps a server's
// instructions at 4 KiB), whatever the summary holds.

import type { ExposeMode } from "./advertise.js";
import { clipUtf8, collapseWhitespace } from "../../util/text.js";

/** Instructions never exceed this many UTF-8 bytes. */
export const MAX_INSTRUCTIONS_BYTES = 4096;
/** The capability summary is clipped to this many bytes before it is embedded. */
export const MAX_SUMMARY_BYTES = 2048;

export interface InstructionsInput {
  expose: ExposeMode;
  /** Capability families of the in-scope servers (built by the capability summary); may be "". */
  summary: string;
  /** Whether the agent has any effective pins. */
  hasPins: boolean;
  /** tool_schema_budget in bytes, when configured. */
  budget?: number;
  /** Maps a clean management tool name (`resolve_tool`) to the name actually advertised. */
  toolNames: (clean: string) => string;
}

export function buildInstructions(input: InstructionsInput): string {
  const t = (clean: string): string => "`" + input.toolNames(clean) + "`";
  const parts: string[] = [
    `This server is mcphub, a gateway in front of several MCP servers. Downstream tools are named server__tool ` +
      `(server name, two underscores, tool name). Use ${t("list_servers")} to see the servers and their state, ` +
      `${t("resolve_tool")} to pick the right tool for a task, ${t("search_tools")} to browse candidates, ` +
      `and ${t("stats")} for usage.`,
  ];
  if (input.expose === "lazy") {
    parts.push(
      `Most downstream tools are deliberately left out of the tool list, yet every one of them is callable ` +
        `through this gateway. Call ${t("resolve_tool")} with a short description of what you need at the start ` +
        `of each task and again whenever the work changes phase (research, planning, implementation, ` +
        `verification). Do this without waiting to be asked. It returns a ranked server__tool recommendation ` +
        `with an argument template. Run it with ${t("call_tool")} {server, tool, arguments} only when status is ` +
        `\`confident\` and \`ambiguous\` is false. Never auto-run an ambiguous recommendation: compare the ` +
        `alternatives, look further with ${t("search_tools")}, or ask for direction. Call ${t("describe_tool")} ` +
        `when you need a tool's full input schema. Large results come back as a receipt with a callId: read it ` +
        `with ${t("get_result")} {callId, format: "text"} or search it with {callId, find} rather than calling the tool ` +
        `again; ${t("poll_result")} checks a call started with detach: true.`,
    );
  }
  // In both modes: clients that defer tool schemas (they show a model only tool names and each
  // server's instructions at start) leave a model this summary as its map of what exists.
  const summary = clipUtf8(collapseWhitespace(input.summary), MAX_SUMMARY_BYTES);
  if (summary !== "") {
    parts.push(`Capability families configured for this agent (call ${t("list_servers")} for live status): ${summary}.`);
  }
  if (input.expose === "lazy" && input.hasPins) {
    parts.push(`A few frequently used tools are pinned and listed directly; call those by name as usual.`);
  }
  if (input.budget !== undefined) {
    parts.push(
      `Directly listed downstream tool definitions are capped at ${input.budget} serialized bytes for this agent; ` +
        `the eight gateway tools stay listed, and any in-scope tool left out remains callable through ${t("call_tool")}.`,
    );
  }
  // The parts above are bounded by construction; the clip only guards against an absurd tool
  // name mapping so the 4 KiB promise holds unconditionally.
  return clipUtf8(parts.join(" "), MAX_INSTRUCTIONS_BYTES);
}

