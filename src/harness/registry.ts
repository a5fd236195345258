// The adapter registry is data: for each harness type, where its file lives by default, which
// format it is, where the MCP section sits and how one entry is spelled. Adding a harness means
// adding a row here (and a codec in codecs.ts when its spelling is new).
import { join } from "node:path";
import { AGENT_TYPE_ALIASES, AGENT_TYPES, type AgentType } from "../config/schema.js";
import {
  codexCodec,
  commandArgsCodec,
  geminiCodec,
  localAgentCodec,
  localRemoteCodec,
  plainCodec,
} from "./codecs.js";
import type { HarnessAdapter } from "./types.js";

/** Per-user application config folder (Claude Desktop, VS Code live there). */
function appConfigDir(home: string): string {
  if (process.platform === "darwin") return join(home, "Library", "Application Support");
  if (process.platform === "win32") return join(home, "AppData", "Roaming");
  return join(home, ".config");
}

const mcpServers = commandArgsCodec();
const typed = commandArgsCodec({ stdioType: "stdio" });

const ROWS: HarnessAdapter[] = [
  {
    type: "local-agent", label: "Local Agent", format: "yaml", layout: "list", section: ["servers"],
    defaultPath: (h) => join(h, ".config", "local-agent", "config.yaml"), codec: localAgentCodec, keepsComments: true,
  },
  {
    type: "claude", label: "Claude Code", format: "json", layout: "map", section: ["mcpServers"],
    defaultPath: (h) => join(h, ".claude.json"), codec: mcpServers, keepsComments: true, markers: (h) => [join(h, ".claude")],
  },
  {
    type: "claude-desktop", label: "Claude Desktop", format: "json", layout: "map", section: ["mcpServers"],
    defaultPath: (h) => join(appConfigDir(h), "Claude", "claude_desktop_config.json"), codec: mcpServers, keepsComments: true,
  },
  {
    type: "cursor", label: "Cursor", format: "json", layout: "map", section: ["mcpServers"],
    defaultPath: (h) => join(h, ".cursor", "mcp.json"), codec: mcpServers, keepsComments: true,
  },
  {
    type: "vscode", label: "VS Code", format: "json", layout: "map", section: ["servers"],
    defaultPath: (h) => join(appConfigDir(h), "Code", "User", "mcp.json"), codec: typed, keepsComments: true,
  },
  {
    type: "codex", label: "Codex CLI", format: "toml", layout: "map", section: ["mcp_servers"],
    defaultPath: (h) => join(h, ".codex", "config.toml"), codec: codexCodec, keepsComments: false,
  },
  {
    type: "opencode", label: "opencode", format: "json", layout: "map", section: ["mcp"],
    defaultPath: (h) => join(h, ".config", "opencode", "opencode.json"), codec: localRemoteCodec, keepsComments: true,
  },
  {
    type: "gemini", label: "Gemini CLI", format: "json", layout: "map", section: ["mcpServers"],
    defaultPath: (h) => join(h, ".gemini", "settings.json"), codec: geminiCodec, keepsComments: true,
  },
  {
    type: "copilot", label: "GitHub Copilot CLI", format: "json", layout: "map", section: ["mcpServers"],
    defaultPath: (h) => join(h, ".copilot", "mcp-config.json"), codec: typed, keepsComments: true,
  },
  {
    type: "qwen", label: "Qwen Code", format: "json", layout: "map", section: ["mcpServers"],
    defaultPath: (h) => join(h, ".qwen", "settings.json"), codec: geminiCodec, keepsComments: true,
  },
  {
    type: "crush", label: "Crush", format: "json", layout: "map", section: ["mcp"],
    defaultPath: (h) => join(h, ".config", "crush", "crush.json"), codec: typed, keepsComments: true,
  },
  {
    type: "kilo", label: "Kilo Code CLI", format: "json", layout: "map", section: ["mcp"],
    defaultPath: (h) => join(h, ".config", "kilo", "kilo.jsonc"), codec: localRemoteCodec, keepsComments: true,
  },
  {
    type: "kimi", label: "Kimi CLI", format: "toml", layout: "map", section: ["mcp"],
    defaultPath: (h) => join(h, ".kimi", "config.toml"), codec: localRemoteCodec, keepsComments: false,
  },
  {
    type: "hermes", label: "Hermes Agent", format: "yaml", layout: "map", section: ["mcp_servers"],
    defaultPath: (h) => join(h, ".hermes", "config.yaml"), codec: plainCodec, keepsComments: true,
  },
  {
    type: "forge", label: "Forge", format: "json", layout: "map", section: ["mcpServers"],
    defaultPath: (h) => join(h, "forge", ".mcp.json"), codec: plainCodec, keepsComments: true,
  },
];

export const ADAPTERS: ReadonlyMap<AgentType, HarnessAdapter> = new Map(ROWS.map((a) => [a.type, a]));

/** The adapter for a type name (accepting the aliases the config accepts); undefined if unknown. */
export function adapterFor(type: string): HarnessAdapter | undefined {
  const t = type.toLowerCase();
  const canonical = (AGENT_TYPE_ALIASES[t] ?? t) as AgentType;
  return (AGENT_TYPES as readonly string[]).includes(canonical) ? ADAPTERS.get(canonical) : undefined;
}

export function allAdapters(): HarnessAdapter[] {
  return [...ROWS];
}
