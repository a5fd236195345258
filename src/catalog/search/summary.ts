// The bounded capability summary embedded in the lazy-mode `initialize` instructions
// (reference §2.9): one item per in-scope server, `name: hint`, joined with " | ", at most 2048
// bytes, ending in "+N more; call list_servers" when servers had to be left out. The same
// one-line hints are what a no-match answer carries per server (`capabilityHints`). A server
// configured without use_when or a description gets a hint derived from its tools (their names,
// or a single tool's first sentence), so no server is listed as a bare name when its tools are known.
import { clipUtf8, collapseWhitespace, utf8Bytes } from "../../util/text.js";

export const SUMMARY_MAX_BYTES = 2048;
export const SUMMARY_HINT_MAX_BYTES = 256;
const SEPARATOR = " | ";

export interface SummaryServer {
  name: string;
  description?: string;
  tags?: string[];
  use_when?: string[];
  /** Exact tool scope for this server (tool fragments after `server__`); omitted = all tools. */
  allowedTools?: string[];
  /** The server's tools, when they are known: the hint of a server without use_when or description. */
  tools?: readonly { tool: string; description: string }[];
}

function moreSuffix(n: number): string {
  return `+${n} more; call list_servers`;
}

/** `allowed tools: a, b (+N more)`, at most 256 bytes, N counting the tools that did not fit. */
function allowlistHint(tools: readonly string[]): string {
  const prefix = "allowed tools: ";
  const shown: string[] = [];
  for (let i = 0; i < tools.length; i++) {
    const candidate = [...shown, tools[i] ?? ""];
    const rest = tools.length - candidate.length;
    const text = prefix + candidate.join(", ") + (rest > 0 ? ` (+${rest} more)` : "");
    if (utf8Bytes(text) > SUMMARY_HINT_MAX_BYTES) break;
    shown.push(tools[i] ?? "");
  }
  const rest = tools.length - shown.length;
  if (shown.length === 0) return clipUtf8(`${prefix}(+${rest} more)`, SUMMARY_HINT_MAX_BYTES);
  return prefix + shown.join(", ") + (rest > 0 ? ` (+${rest} more)` : "");
}

/** "create_entities" / "getFileInfo" / "get-env" → "create entities" / "get file info" / "get env". */
function humanize(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_\-.]+/g, " ")
    .toLowerCase()
    .trim();
}

/**
 * What a server's tools say it does: a single tool's first sentence, else the tools' names in
 * words ("tools: create entities, read graph, search nodes (+6 more)"), within the hint's bound.
 */
export function toolsHint(tools: readonly { tool: string; description: string }[]): string {
  if (tools.length === 0) return "";
  if (tools.length === 1) {
    const only = tools[0] as { tool: string; description: string };
    const first = collapseWhitespace(only.description).split(/(?<=[.!?])\s/u)[0] ?? "";
    return clipUtf8(first.length > 0 ? `${humanize(only.tool)}: ${first}` : humanize(only.tool), SUMMARY_HINT_MAX_BYTES);
  }
  const names = tools.map((t) => humanize(t.tool)).filter((n) => n.length > 0);
  const shown: string[] = [];
  for (const n of names) {
    const rest = names.length - shown.length - 1;
    const text = `tools: ${[...shown, n].join(", ")}${rest > 0 ? ` (+${rest} more)` : ""}`;
    if (utf8Bytes(text) > SUMMARY_HINT_MAX_BYTES) break;
    shown.push(n);
  }
  const rest = names.length - shown.length;
  return `tools: ${shown.join(", ")}${rest > 0 ? ` (+${rest} more)` : ""}`;
}

/** One server's one-line hint: use_when, else its description, else what its tools say, else its tags. */
export function hintFor(server: SummaryServer): string {
  if (server.allowedTools !== undefined) return allowlistHint(server.allowedTools);
  const useWhen = (server.use_when ?? []).map(collapseWhitespace).filter((s) => s.length > 0);
  let hint = "";
  if (useWhen.length > 0) hint = useWhen.join("; ");
  else if (server.description && collapseWhitespace(server.description).length > 0) hint = server.description;
  else if (server.tools && server.tools.length > 0) hint = toolsHint(server.tools);
  else hint = (server.tags ?? []).map(collapseWhitespace).filter((s) => s.length > 0).join(", ");
  return clipUtf8(collapseWhitespace(hint), SUMMARY_HINT_MAX_BYTES);
}

/**
 * The servers' one-line hints as a map (sorted by name) within `maxBytes` of JSON, for answers that
 * have nothing better to offer: `more` counts the servers left out (call list_servers for them).
 */
export function capabilityHints(servers: SummaryServer[], maxBytes: number): { hints: Record<string, string>; more: number } {
  const items = [...servers]
    .filter((s) => s.allowedTools === undefined || s.allowedTools.length > 0)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const hints: Record<string, string> = {};
  let used = 2;
  let kept = 0;
  for (const s of items) {
    const hint = hintFor(s);
    const bytes = utf8Bytes(JSON.stringify(s.name)) + utf8Bytes(JSON.stringify(hint)) + 2;
    if (used + bytes > maxBytes) break;
    hints[s.name] = hint;
    used += bytes;
    kept++;
  }
  return { hints, more: items.length - kept };
}

/**
 * Servers are given in any order (they are sorted by name here) and already filtered to the
 * agent's scope; a server with an empty exact allowlist is skipped entirely.
 */
export function capabilitySummary(servers: SummaryServer[]): string {
  const items = [...servers]
    .filter((s) => s.allowedTools === undefined || s.allowedTools.length > 0)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((s) => {
      const hint = hintFor(s);
      return hint.length > 0 ? `${s.name}: ${hint}` : s.name;
    });
  let out = "";
  for (let i = 0; i < items.length; i++) {
    const item = items[i] ?? "";
    const sep = i === 0 ? "" : SEPARATOR;
    const remainingAfter = items.length - i - 1;
    const reserve = remainingAfter > 0 ? utf8Bytes(SEPARATOR + moreSuffix(remainingAfter)) : 0;
    if (utf8Bytes(out + sep + item) + reserve <= SUMMARY_MAX_BYTES) {
      out += sep + item;
      continue;
    }
    if (i === 0) {
      // A lone first item that is too long is clipped (leaving room for the suffix if others follow).
      const room = SUMMARY_MAX_BYTES - reserve;
      out = clipUtf8(item, room);
      if (remainingAfter > 0) out += SEPARATOR + moreSuffix(remainingAfter);
      return out;
    }
    const suffix = SEPARATOR + moreSuffix(items.length - i);
    if (utf8Bytes(out + suffix) <= SUMMARY_MAX_BYTES) out += suffix;
    return out;
  }
  return out;
}
