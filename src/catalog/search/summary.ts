// The bounded capability summary embedded in the lazy-mode `initialize` instructions
// (reference §2.9): one item per in-scope server, `name: hint`, joined with " | ", at most 2048
// bytes, ending in "+N more; call list_servers" when servers had to be left out.
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

function hintFor(server: SummaryServer): string {
  if (server.allowedTools !== undefined) return allowlistHint(server.allowedTools);
  const useWhen = (server.use_when ?? []).map(collapseWhitespace).filter((s) => s.length > 0);
  let hint = "";
  if (useWhen.length > 0) hint = useWhen.join("; ");
  else if (server.description && collapseWhitespace(server.description).length > 0) hint = server.description;
  else hint = (server.tags ?? []).map(collapseWhitespace).filter((s) => s.length > 0).join(", ");
  return clipUtf8(collapseWhitespace(hint), SUMMARY_HINT_MAX_BYTES);
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
