// Entry codecs: how each harness spells one MCP server. Every codec reads defensively (a harness
// file is outside input) and writes only the keys it lists in `managedKeys`, so per-entry keys a
// user added by hand survive an update.
import type { EntryCodec, NeutralEntry, RawObject, RawValue } from "./types.js";

const isObject = (v: RawValue | undefined): v is RawObject =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const stringList = (v: RawValue | undefined): string[] | undefined =>
  Array.isArray(v) && v.every((x) => typeof x === "string" || typeof x === "number") ? v.map(String) : undefined;

const stringMap = (v: RawValue | undefined): Record<string, string> | undefined => {
  if (!isObject(v)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    if (typeof x === "string" || typeof x === "number" || typeof x === "boolean") out[k] = String(x);
  }
  return out;
};

const nonEmpty = <T extends object>(v: T | undefined): T | undefined =>
  v !== undefined && (Array.isArray(v) ? v.length > 0 : Object.keys(v).length > 0) ? v : undefined;

/** Drops undefined members so encoded entries hold only real keys. */
function compact(obj: Record<string, RawValue | undefined>): RawObject {
  const out: RawObject = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out;
}

function neutral(name: string, parts: Omit<NeutralEntry, "name">): NeutralEntry {
  const e: NeutralEntry = { name };
  if (parts.command !== undefined) e.command = parts.command;
  if (nonEmpty(parts.args)) e.args = parts.args;
  if (nonEmpty(parts.env)) e.env = parts.env;
  if (parts.url !== undefined) e.url = parts.url;
  if (parts.url !== undefined) e.transport = parts.transport ?? "http";
  if (nonEmpty(parts.headers)) e.headers = parts.headers;
  return e;
}

const remoteType = (t: RawValue | undefined): "http" | "sse" =>
  t === "sse" ? "sse" : "http";

/**
 * The `mcpServers` family (Claude Code, Claude Desktop, Cursor) and its typed variant (VS Code,
 * Copilot CLI, Crush): stdio `{command, args, env}` (typed adds `type: "stdio"`), remote
 * `{type: http|sse, url, headers}`.
 */
export function commandArgsCodec(opts: { stdioType?: string; headersKey?: string; remoteType?: boolean } = {}): EntryCodec {
  const headersKey = opts.headersKey ?? "headers";
  const writesType = opts.remoteType ?? true;
  return {
    managedKeys: ["type", "command", "args", "env", "url", headersKey],
    encode(e) {
      if (e.url !== undefined) {
        return compact({
          type: writesType ? (e.transport ?? "http") : undefined,
          url: e.url,
          [headersKey]: nonEmpty(e.headers),
        });
      }
      return compact({ type: opts.stdioType, command: e.command, args: e.args ?? [], env: nonEmpty(e.env) });
    },
    decode(name, raw) {
      if (!isObject(raw)) return undefined;
      if (typeof raw.url === "string") {
        return neutral(name, { url: raw.url, transport: remoteType(raw.type), headers: stringMap(raw[headersKey]) });
      }
      if (typeof raw.command !== "string") return undefined;
      return neutral(name, { command: raw.command, args: stringList(raw.args), env: stringMap(raw.env) });
    },
  };
}

/** Gemini CLI and Qwen Code: stdio `{command, args, env}`, streamable HTTP `{httpUrl}`, SSE `{url}`. */
export const geminiCodec: EntryCodec = {
  managedKeys: ["command", "args", "env", "url", "httpUrl", "headers"],
  encode(e) {
    if (e.url !== undefined) {
      return e.transport === "sse"
        ? compact({ url: e.url, headers: nonEmpty(e.headers) })
        : compact({ httpUrl: e.url, headers: nonEmpty(e.headers) });
    }
    return compact({ command: e.command, args: e.args ?? [], env: nonEmpty(e.env) });
  },
  decode(name, raw) {
    if (!isObject(raw)) return undefined;
    const headers = stringMap(raw.headers);
    if (typeof raw.httpUrl === "string") return neutral(name, { url: raw.httpUrl, transport: "http", headers });
    if (typeof raw.url === "string") return neutral(name, { url: raw.url, transport: "sse", headers });
    if (typeof raw.command !== "string") return undefined;
    return neutral(name, { command: raw.command, args: stringList(raw.args), env: stringMap(raw.env) });
  },
};

/**
 * opencode, Kilo and Kimi: stdio `{type: "local", command: [cmd, ...args], environment}`,
 * remote `{type: "remote", url, headers}` (these harnesses pick the HTTP flavour themselves).
 */
export const localRemoteCodec: EntryCodec = {
  managedKeys: ["type", "command", "environment", "url", "headers"],
  encode(e) {
    if (e.url !== undefined) return compact({ type: "remote", url: e.url, headers: nonEmpty(e.headers) });
    return compact({ type: "local", command: [e.command ?? "", ...(e.args ?? [])], environment: nonEmpty(e.env) });
  },
  decode(name, raw) {
    if (!isObject(raw)) return undefined;
    if (typeof raw.url === "string") {
      return neutral(name, { url: raw.url, transport: remoteType(raw.transport ?? null), headers: stringMap(raw.headers) });
    }
    const cmd = stringList(raw.command);
    if (cmd === undefined || cmd.length === 0 || cmd[0] === "") return undefined;
    return neutral(name, { command: cmd[0], args: cmd.slice(1), env: stringMap(raw.environment) });
  },
};

/** Hermes and Forge: stdio `{command, args, env}`, remote `{url, headers}`. */
export const plainCodec: EntryCodec = commandArgsCodec({ remoteType: false });

/** Codex: `[mcp_servers.<n>]` with `{command, args, env}` or `{url, http_headers}`. */
export const codexCodec: EntryCodec = commandArgsCodec({ remoteType: false, headersKey: "http_headers" });

/**
 * local-agent: a `servers:` list of `{name, command, args?, env?: ["K=V", ...]}` or
 * `{name, url, transport: streamable-http|sse, headers?}`. env is written as a sorted K=V list.
 */
export const localAgentCodec: EntryCodec = {
  managedKeys: ["name", "command", "args", "env", "url", "transport", "headers"],
  encode(e) {
    if (e.url !== undefined) {
      return compact({
        name: e.name,
        url: e.url,
        transport: e.transport === "sse" ? "sse" : "streamable-http",
        headers: nonEmpty(e.headers),
      });
    }
    const env = nonEmpty(e.env);
    return compact({
      name: e.name,
      command: e.command,
      args: nonEmpty(e.args),
      env: env ? Object.keys(env).sort().map((k) => `${k}=${env[k]}`) : undefined,
    });
  },
  decode(name, raw) {
    if (!isObject(raw)) return undefined;
    if (typeof raw.url === "string") {
      return neutral(name, { url: raw.url, transport: remoteType(raw.transport === "sse" ? "sse" : null), headers: stringMap(raw.headers) });
    }
    if (typeof raw.command !== "string") return undefined;
    let env: Record<string, string> | undefined;
    const list = stringList(raw.env);
    if (list) {
      env = {};
      for (const kv of list) {
        const i = kv.indexOf("=");
        if (i > 0) env[kv.slice(0, i)] = kv.slice(i + 1);
      }
    } else {
      env = stringMap(raw.env);
    }
    return neutral(name, { command: raw.command, args: stringList(raw.args), env });
  },
};

/** Canonical form for comparing entries: nil and empty are the same, remote transport defaults to http. */
export function canonicalEntry(e: NeutralEntry): string {
  const sortObj = (o: Record<string, string> | undefined) =>
    Object.fromEntries(Object.entries(o ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify({
    command: e.command ?? null,
    args: e.args ?? [],
    env: sortObj(e.env),
    url: e.url ?? null,
    transport: e.url !== undefined ? (e.transport ?? "http") : null,
    headers: sortObj(e.headers),
  });
}

export function sameEntry(a: NeutralEntry, b: NeutralEntry): boolean {
  return canonicalEntry(a) === canonicalEntry(b);
}
