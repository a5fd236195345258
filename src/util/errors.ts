// The one way a caught value becomes message text: its message for an Error, else its string form.
// The SDK's McpError puts "MCP error <code>: " in front of its message, and an error that crossed
// two SDK hops carries that prefix twice; a repeated prefix is kept once.
const REPEATED_MCP_PREFIX = /(MCP error (-?\d+): )(?:MCP error \2: )+/g;

export function errorText(err: unknown): string {
  return collapseMcpPrefix(err instanceof Error ? err.message : String(err));
}

/** "MCP error -32602: MCP error -32602: x" → "MCP error -32602: x". */
export function collapseMcpPrefix(text: string): string {
  return text.replace(REPEATED_MCP_PREFIX, "$1");
}
