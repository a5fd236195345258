// The mcphub config schema. Everything read from mcphub.yaml/.toml/.json passes through here,
// so every later part can trust the types. Rules that span several keys (pins naming known
// servers, agent tool lists, ...) live in the superRefine at the bottom so their messages carry
// a precise path too.
import { parseStoreUrl } from "../store/url.js";
import { cidrProblem } from "../util/cidr.js";
import { z } from "zod";
import { parseBytes, parseDuration } from "../util/units.js";
import { agentLimitsSchema, makeServerLimitsSchema, telemetrySchema } from "./ops.js";
import { effectsSchema, guardIssues, makePolicySchema } from "./policy.js";
import { sandboxSchema } from "./sandbox.js";

export const RESERVED_SERVER_NAME = "mcphub";
export const MAX_USE_WHEN = 8;
export const MAX_HINT_BYTES = 256;
export const MAX_TOOL_USE_WHEN_KEYS = 128;
export const MIN_RESPONSE_BUDGET = 512;
/** A downstream with no call, stream or subscription for this long is stopped (0 = never). */
export const DEFAULT_SERVER_IDLE_TIMEOUT_MS = 10 * 60_000;
/** How long discovery waits for in-scope servers that have no catalogue yet. */
export const DEFAULT_DISCOVERY_WAIT_MS = 5_000;
/** Largest JSON-RPC line accepted from a harness on stdio. */
export const DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024;
/** Largest JSON-RPC line accepted from a stdio downstream (V8 strings stop at about 512 MiB). */
export const DEFAULT_MAX_DOWNSTREAM_MESSAGE_SIZE = 256 * 1024 * 1024;
const MIN_MESSAGE_SIZE = 1024;

export const AGENT_TYPES = [
  "local-agent",
  "claude",
  "claude-desktop",
  "cursor",
  "vscode",
  "codex",
  "opencode",
  "gemini",
  "copilot",
  "qwen",
  "crush",
  "kilo",
  "kimi",
  "hermes",
  "forge",
] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

/** Accepted spellings of agent types, mapped to the canonical adapter name. */
export const AGENT_TYPE_ALIASES: Record<string, AgentType> = {
  claudecode: "claude",
  "claude-code": "claude",
  localagent: "local-agent",
  claudedesktop: "claude-desktop",
  desktop: "claude-desktop",
  forgecode: "forge",
  "vs-code": "vscode",
};

const SERVER_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

const byteLength = (s: string): number => Buffer.byteLength(s, "utf8");

function hint(label: string) {
  return z
    .string()
    .refine((s) => s.trim() !== "", `${label} must not be blank`)
    .refine((s) => byteLength(s) <= MAX_HINT_BYTES, {
      error: (iss) => `${label} hints must be at most ${MAX_HINT_BYTES} bytes (this one is ${byteLength(String(iss.input))})`,
    })
    .refine((s) => !CONTROL_RE.test(s), `${label} must not contain control characters`);
}

const hintList = (label: string) =>
  z.array(hint(label)).max(MAX_USE_WHEN, {
    error: (iss) =>
      `at most ${MAX_USE_WHEN} ${label} hints are allowed (found ${Array.isArray(iss.input) ? iss.input.length : "more"})`,
  });

/** A duration such as "30s", "5m", "1h30m" or "24h", kept in milliseconds. */
export const durationSchema = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const ms = typeof v === "number" ? (Number.isInteger(v) && v >= 0 ? v * 1000 : undefined) : parseDuration(v);
  if (ms === undefined) {
    ctx.addIssue({
      code: "custom",
      message: `"${String(v)}" is not a duration; use a number with a unit such as 500ms, 30s, 5m, 2h or 7d`,
    });
    return z.NEVER;
  }
  return ms;
}).describe('a duration such as "30s", "5m" or "1h30m"');

/** A byte size such as "32KB", "900B" or a plain integer. */
export const byteSizeSchema = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const n = parseBytes(v);
  if (n === undefined) {
    ctx.addIssue({
      code: "custom",
      message: `"${String(v)}" is not a byte size; use an integer or a size such as 900B, 32KB or 1MB`,
    });
    return z.NEVER;
  }
  return n;
}).describe('a byte size such as "32KB", "900B" or 4096');

const VAULT_REF = /^vault:\/\/[^/\s]+\/[^/\s]+$/;
const vaultRef = (what: string, example: string) =>
  z
    .string()
    .refine((v) => VAULT_REF.test(v), `${what} must be a vault reference such as ${example} (store the value with \`mcphub vault set ${example.slice("vault://".length)}\`), never the value itself`);

/** OAuth 2.1 sign-in for a remote server (see docs/auth.md); every key is optional. */
export const oauthSchema = z.strictObject({
  client_id: z.string().min(1, "client_id must not be empty").optional(),
  client_secret: vaultRef("client_secret", "vault://linear/CLIENT_SECRET").optional(),
  scopes: z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "each scope is one word without spaces or quotes")).optional(),
  redirect_port: z.number().int().min(1).max(65535, "redirect_port must be a port number (1-65535)").optional(),
  grant: z.enum(["authorization_code", "client_credentials"], { message: 'grant must be "authorization_code" or "client_credentials"' }).default("authorization_code"),
  private_key: vaultRef("private_key", "vault://billing/PRIVATE_KEY").optional(),
  signing_alg: z.string().regex(/^(RS|PS|ES)(256|384|512)$/, "signing_alg must be one of RS256, ES256, PS256 (or the 384/512 variants)").optional(),
  client_metadata_url: z
    .string()
    .refine((u) => /^https:\/\/[^/]+\/.+/.test(u), "client_metadata_url must be an https URL with a path (a client ID metadata document)")
    .optional(),
  issuer: z.string().refine((u) => /^https?:\/\//.test(u), "issuer must be the authorization server's http(s) URL").optional(),
});

/** When a server's process (or remote session) is started; see docs/downstream.md "Lifecycle". */
export const START_MODES = ["auto", "lazy", "eager"] as const;
export type StartMode = (typeof START_MODES)[number];
const startModeSchema = z.enum(START_MODES, { message: 'start must be "auto", "lazy" or "eager"' });

const envSchema = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String).describe("a string (or a number or true/false)"))
  .describe("a map of variable names to values");

export const serverSchema = z
  .strictObject({
    command: z.string().min(1, "command must not be empty").optional(),
    args: z.array(z.union([z.string(), z.number()]).transform(String)).optional(),
    env: envSchema.optional(),
    cwd: z.string().optional(),
    // Checked in the superRefine below, so a bad url gets exactly one message.
    url: z.string().optional(),
    transport: z
      .enum(["http", "sse", "streamable-http"], { message: 'transport must be "http" or "sse"' })
      .transform((t) => (t === "streamable-http" ? "http" : t))
      .optional(),
    headers: z.record(z.string(), z.string()).optional(),
    enabled: z.boolean().default(true),
    description: z.string().optional(),
    tags: z.array(z.string()).optional(),
    use_when: hintList("use_when").optional(),
    tool_use_when: z.record(z.string(), hintList("tool_use_when")).optional(),
    vault: z.string().min(1, "vault must name a vault project").optional(),
    vault_only: z.array(z.string()).optional(),
    vault_prefix: z.string().optional(),
    start: startModeSchema.optional(),
    idle_timeout: durationSchema.optional(),
    // Protocol pass-through (docs/protocol.md): publish under the server's own names (default
    // true = `server__name`), give each upstream session its own connection (default "shared"),
    // or answer roots/list from config. Optional rather than defaulted, so code that builds a
    // ServerConfig by hand needs not spell them out; read them through the helpers below.
    namespace: z.boolean().optional(),
    connection: z.enum(["shared", "per-session"], { message: 'connection must be "shared" or "per-session"' }).optional(),
    roots: z.array(z.string()).optional(),
    oauth: oauthSchema.optional(),
    // Guardrails (docs/guardrails.md): effect overrides by tool name ("*" = every tool), pinned
    // definitions (default on), and whether tools never seen before need an approval first.
    effects: effectsSchema.optional(),
    pin_definitions: z.boolean().optional(),
    quarantine: z.boolean().optional(),
    // Operations (docs/operations.md): calls to this server at once, across all agents.
    limits: makeServerLimitsSchema(durationSchema).optional(),
    // Confinement of a stdio server's process (docs/sandbox.md). After loading, this is the
    // effective setting: the server's own combined with the top-level default (config/sandbox.ts).
    sandbox: sandboxSchema.optional(),
  })
  .superRefine((s, ctx) => {
    const remote = s.url !== undefined;
    const kindKnown = (s.command !== undefined) !== remote;
    if (s.command !== undefined && remote) {
      ctx.addIssue({ code: "custom", message: "set either command (stdio) or url (remote), not both" });
    } else if (s.command === undefined && !remote) {
      ctx.addIssue({ code: "custom", message: "needs a command (stdio server) or a url (remote server)" });
    }
    // Which keys belong is only decidable once the server is clearly stdio or remote.
    if (!kindKnown) {
      // nothing more to say about transport-specific keys
    } else if (remote) {
      for (const key of ["args", "env", "cwd", "vault", "vault_only", "vault_prefix", "sandbox"] as const) {
        if (s[key] !== undefined) {
          ctx.addIssue({ code: "custom", path: [key], message: `${key} applies only to stdio servers (this one has a url)` });
        }
      }
      const problem = urlProblem(s.url ?? "");
      if (problem) ctx.addIssue({ code: "custom", path: ["url"], message: problem });
    } else {
      for (const key of ["transport", "headers", "oauth"] as const) {
        if (s[key] !== undefined) {
          ctx.addIssue({ code: "custom", path: [key], message: `${key} applies only to remote servers (this one has a command)` });
        }
      }
    }
    if (s.oauth !== undefined && remote) oauthProblems(s.oauth, s.headers, ctx);
    if ((s.vault_only !== undefined || s.vault_prefix !== undefined) && s.vault === undefined) {
      ctx.addIssue({ code: "custom", path: ["vault"], message: "vault_only and vault_prefix need vault: PROJECT" });
    }
    s.roots?.forEach((r, i) => {
      const problem = rootProblem(r);
      if (problem) ctx.addIssue({ code: "custom", path: ["roots", i], message: problem });
    });
    const keys = Object.keys(s.tool_use_when ?? {});
    if (keys.length > MAX_TOOL_USE_WHEN_KEYS) {
      ctx.addIssue({ code: "custom", path: ["tool_use_when"], message: `at most ${MAX_TOOL_USE_WHEN_KEYS} tools may have hints` });
    }
    for (const k of keys) {
      if (k.trim() === "" || byteLength(k) > MAX_HINT_BYTES || CONTROL_RE.test(k)) {
        ctx.addIssue({ code: "custom", path: ["tool_use_when", k], message: "tool names must be non-blank, at most 256 bytes, without control characters" });
      }
    }
  });

function oauthProblems(o: z.output<typeof oauthSchema>, headers: Record<string, string> | undefined, ctx: z.core.$RefinementCtx): void {
  const at = (key: string, message: string) => ctx.addIssue({ code: "custom", path: ["oauth", key], message });
  if (Object.keys(headers ?? {}).some((h) => h.toLowerCase() === "authorization")) {
    ctx.addIssue({ code: "custom", path: ["headers"], message: "an Authorization header and oauth exclude each other: oauth supplies the Authorization header" });
  }
  if (o.grant === "client_credentials") {
    if (o.client_id === undefined) at("client_id", "client_credentials needs client_id");
    if (o.client_secret === undefined && o.private_key === undefined) at("grant", "client_credentials needs client_secret or private_key");
    if (o.redirect_port !== undefined) at("redirect_port", "redirect_port applies only to the authorization_code grant (client_credentials has no browser step)");
    if (o.client_metadata_url !== undefined) at("client_metadata_url", "client_metadata_url applies only to the authorization_code grant");
  } else if (o.private_key !== undefined) {
    at("private_key", 'private_key applies only to grant: "client_credentials"');
  }
  if (o.client_secret !== undefined && o.private_key !== undefined) at("private_key", "set client_secret or private_key, not both");
  if (o.signing_alg !== undefined && o.private_key === undefined) at("signing_alg", "signing_alg applies only with private_key");
  if (o.client_secret !== undefined && o.client_id === undefined) at("client_secret", "client_secret needs client_id");
  if (o.issuer !== undefined && o.client_id === undefined) at("issuer", "issuer binds a pre-registered client_id; set client_id too");
}
/** Guardrails per agent and as every agent's default (src/config/policy.ts). */
export const policySchema = makePolicySchema(durationSchema);

export const agentSchema = z.strictObject({
  type: z
    .string()
    .transform((t) => AGENT_TYPE_ALIASES[t.toLowerCase()] ?? t.toLowerCase())
    .pipe(z.enum(AGENT_TYPES, { message: `type must be one of ${AGENT_TYPES.join(", ")}` }))
    .optional(),
  path: z.string().optional(),
  mode: z.enum(["gateway", "direct"], { message: 'mode must be "gateway" or "direct"' }).default("gateway"),
  disabled: z.boolean().default(false),
  servers: z.array(z.string()).optional(),
  tools: z.array(z.string()).optional(),
  pin: z.array(z.string()).optional(),
  tool_schema_budget: byteSizeSchema.optional(),
  policy: policySchema.optional(),
  limits: agentLimitsSchema.optional(),
});

/**
 * Optional semantic search: any OpenAI-compatible embeddings API. `url` is the API base (requests
 * go to `{url}/embeddings`); `api_key` may be a `vault://PROJECT/KEY` reference.
 */
export const embeddingsSchema = z.strictObject({
  url: z
    .string()
    .refine((u) => /^https?:\/\/[^\s/]+/i.test(u) && URL.canParse(u), "url must be the API base, such as http://localhost:11434/v1 (requests go to {url}/embeddings)"),
  model: z.string().min(1, "model must name the embedding model, such as nomic-embed-text"),
  api_key: z.string().min(1, "api_key must not be empty (leave it out when the endpoint needs none)").optional(),
  dimensions: z.number().int().positive("dimensions must be a positive whole number").max(8192, "dimensions must be at most 8192").optional(),
  /** How long a search waits for the query's vector before it answers lexically. */
  query_timeout: durationSchema.optional(),
});

export const searchSchema = z.strictObject({ embeddings: embeddingsSchema.optional() });

/** What the daemon lets one client hold (docs/daemon.md#slow-and-greedy-clients). */
export const DEFAULT_HTTP_LIMITS = {
  header_timeout: 10_000,
  request_timeout: 30_000,
  keep_alive_timeout: 5_000,
  max_connections: 256,
  max_connections_per_client: 64,
} as const;
const positiveDuration = (key: string) => durationSchema.refine((ms) => ms > 0, `http_limits.${key} must be positive`);
const connections = (key: string) => z.number().int(`http_limits.${key} must be a whole number`).min(1, `http_limits.${key} must be at least 1`);
export const httpLimitsSchema = z
  .strictObject({
    header_timeout: positiveDuration("header_timeout").default(DEFAULT_HTTP_LIMITS.header_timeout),
    request_timeout: positiveDuration("request_timeout").default(DEFAULT_HTTP_LIMITS.request_timeout),
    keep_alive_timeout: positiveDuration("keep_alive_timeout").default(DEFAULT_HTTP_LIMITS.keep_alive_timeout),
    max_connections: connections("max_connections").default(DEFAULT_HTTP_LIMITS.max_connections),
    max_connections_per_client: connections("max_connections_per_client").default(DEFAULT_HTTP_LIMITS.max_connections_per_client),
  })
  .refine((l) => l.header_timeout <= l.request_timeout, {
    message: "http_limits.header_timeout must not be longer than http_limits.request_timeout (the whole request includes its head)",
    path: ["header_timeout"],
  })
  .refine((l) => l.max_connections_per_client <= l.max_connections, {
    message: "http_limits.max_connections_per_client must not be larger than http_limits.max_connections",
    path: ["max_connections_per_client"],
  });

/** Detached calls in flight (docs/results.md#detached-calls): per agent, reserved per agent, shared. */
export const DEFAULT_DETACHED = { per_agent: 8, reserved: 2, shared: 24 } as const;
const count = (key: string, min: number) => z.number().int(`detached.${key} must be a whole number`).min(min, `detached.${key} must be at least ${min}`);
export const detachedSchema = z
  .strictObject({
    per_agent: count("per_agent", 1).default(DEFAULT_DETACHED.per_agent),
    reserved: count("reserved", 1).default(DEFAULT_DETACHED.reserved),
    shared: count("shared", 0).default(DEFAULT_DETACHED.shared),
  })
  .refine((d) => d.reserved <= d.per_agent, { message: "detached.reserved must not be larger than detached.per_agent", path: ["reserved"] });

export const configSchema = z
  .strictObject({
    version: z.literal(1, { message: "version must be 1" }).default(1),
    expose: z.enum(["all", "lazy"], { message: 'expose must be "all" or "lazy"' }).default("all"),
    pin: z.array(z.string()).optional(),
    servers: z.record(z.string(), serverSchema).describe("a map of server names to server settings").default({}),
    groups: z.record(z.string(), z.array(z.string())).describe("a map of group names to lists of server names").default({}),
    agents: z.record(z.string(), agentSchema).describe("a map of agent names to agent settings").default({}),
    connect_timeout: durationSchema.default(30_000),
    call_timeout: durationSchema.default(30 * 60_000),
    call_idle_timeout: durationSchema.default(60_000),
    response_budget: byteSizeSchema.default(32 * 1024),
    verbatim: z.boolean().default(false),
    listen: z.string().describe('HOST:PORT such as "127.0.0.1:9820"').optional(),
    http_transport: z.enum(["lean", "sdk"], { message: 'http_transport must be "lean" or "sdk"' }).default("lean"),
    session_idle_timeout: durationSchema.default(30 * 60_000),
    max_sessions_per_agent: z.number().int().min(1, "max_sessions_per_agent must be at least 1").default(64),
    result_retention: durationSchema.default(24 * 3_600_000),
    max_message_size: byteSizeSchema.default(DEFAULT_MAX_MESSAGE_SIZE),
    max_downstream_message_size: byteSizeSchema.default(DEFAULT_MAX_DOWNSTREAM_MESSAGE_SIZE),
    find_timeout: durationSchema.default(10_000),
    management_tool_names: z
      .enum(["prefixed", "clean"], { message: 'management_tool_names must be "prefixed" (mcphub_*) or "clean"' })
      .default("prefixed"),
    start: startModeSchema.default("auto"),
    idle_timeout: durationSchema.default(DEFAULT_SERVER_IDLE_TIMEOUT_MS),
    discovery_wait: durationSchema.default(DEFAULT_DISCOVERY_WAIT_MS),
    search: searchSchema.optional(),
    detached: detachedSchema.default({ ...DEFAULT_DETACHED }),
    http_limits: httpLimitsSchema.default({ ...DEFAULT_HTTP_LIMITS }),
    // Guardrails: every agent's default policy, effect overrides by server__tool, quarantine.
    policy: policySchema.optional(),
    effects: effectsSchema.optional(),
    quarantine: z.boolean().default(false),
    // Operations (docs/operations.md): every agent's default call limits, telemetry exports.
    limits: agentLimitsSchema.optional(),
    telemetry: telemetrySchema.optional(),
    // Team mode: the shared state in PostgreSQL (docs/team.md); absent, the data directory's files.
    store: z.string().describe("postgres://USER@HOST:PORT/DB").optional(),
    // Host headers the HTTP daemon accepts besides its own address: the name a load balancer in
    // front of the replicas is reached by (DNS-rebinding protection stays on for every other name).
    allowed_hosts: z.array(z.string().regex(/^[^\s/@]+:\d{1,5}$/, "allowed_hosts entries are HOST:PORT, such as mcp.example.internal:8443")).optional(),
    // Reverse proxies (CIDR ranges) whose X-Forwarded-For names the client: the per-client
    // connection cap then counts the client, not the balancer. Only these peers are believed.
    trusted_proxies: z.array(z.string().refine((v) => cidrProblem(v) === undefined, { error: (iss) => cidrProblem(String(iss.input)) ?? "not a CIDR range" })).optional(),
    // Team mode: a replica whose heartbeat has been silent this long is taken to be dead, and its
    // pending detached calls are reported lost (it beats every quarter of this, at most every 5 s).
    replica_timeout: durationSchema.default(20_000),
    // Every stdio server's default sandbox (a server's own `sandbox` combines with it).
    sandbox: sandboxSchema.optional(),
  })
  .superRefine((c, ctx) => {
    if (c.store !== undefined) {
      try {
        parseStoreUrl(c.store);
      } catch (err) {
        ctx.addIssue({ code: "custom", path: ["store"], message: err instanceof Error ? err.message : String(err) });
      }
    }
    const servers = new Set(Object.keys(c.servers));
    for (const name of servers) {
      const path = ["servers", name];
      if (!SERVER_NAME_RE.test(name)) {
        ctx.addIssue({ code: "custom", path, message: "server names use letters, digits, '.', '_' and '-', starting with a letter or digit" });
      } else if (name.includes("__")) {
        ctx.addIssue({ code: "custom", path, message: 'server names must not contain "__" (it separates server and tool)' });
      } else if (name.toLowerCase() === RESERVED_SERVER_NAME) {
        ctx.addIssue({ code: "custom", path, message: `"${RESERVED_SERVER_NAME}" is reserved for the gateway itself; pick another name` });
      }
    }
    if (c.connect_timeout <= 0) ctx.addIssue({ code: "custom", path: ["connect_timeout"], message: "connect_timeout must be positive" });
    if (c.call_timeout <= 0) ctx.addIssue({ code: "custom", path: ["call_timeout"], message: "call_timeout must be positive" });
    if (c.replica_timeout < 1000) ctx.addIssue({ code: "custom", path: ["replica_timeout"], message: "replica_timeout must be at least 1s (a heartbeat a quarter of it apart)" });
    if (c.session_idle_timeout <= 0) ctx.addIssue({ code: "custom", path: ["session_idle_timeout"], message: "session_idle_timeout must be positive" });
    if (c.call_idle_timeout <= 0) ctx.addIssue({ code: "custom", path: ["call_idle_timeout"], message: "call_idle_timeout must be positive" });
    if (c.result_retention <= 0) ctx.addIssue({ code: "custom", path: ["result_retention"], message: "result_retention must be positive" });
    for (const key of ["max_message_size", "max_downstream_message_size"] as const) {
      if (c[key] < MIN_MESSAGE_SIZE) ctx.addIssue({ code: "custom", path: [key], message: `${key} must be at least 1KB (got ${c[key]}B)` });
    }
    if (c.find_timeout <= 0) ctx.addIssue({ code: "custom", path: ["find_timeout"], message: "find_timeout must be positive" });
    if (c.response_budget !== 0 && c.response_budget < MIN_RESPONSE_BUDGET) {
      ctx.addIssue({
        code: "custom",
        path: ["response_budget"],
        message: `response_budget must be 0 (unlimited) or at least ${MIN_RESPONSE_BUDGET}B (got ${c.response_budget}B)`,
      });
    }
    if (c.listen !== undefined && parseListen(c.listen) === undefined) {
      ctx.addIssue({ code: "custom", path: ["listen"], message: 'listen must be HOST:PORT, e.g. "127.0.0.1:9820"' });
    }
    const checkPins = (pins: string[] | undefined, base: (string | number)[], allowed?: Set<string>) => {
      pins?.forEach((p, i) => {
        const problem = pinProblem(p, servers);
        if (problem) ctx.addIssue({ code: "custom", path: [...base, i], message: problem });
        else if (allowed && !allowed.has(pinServer(p))) {
          ctx.addIssue({ code: "custom", path: [...base, i], message: `pins server "${pinServer(p)}", which is not in this agent's servers list` });
        }
      });
    };
    checkPins(c.pin, ["pin"]);
    for (const [g, members] of Object.entries(c.groups)) {
      members.forEach((m, i) => {
        if (!servers.has(m)) ctx.addIssue({ code: "custom", path: ["groups", g, i], message: unknownServer(m, servers) });
      });
    }
    for (const [a, agent] of Object.entries(c.agents)) {
      const base = ["agents", a];
      agent.servers?.forEach((s, i) => {
        if (!servers.has(s)) ctx.addIssue({ code: "custom", path: [...base, "servers", i], message: unknownServer(s, servers) });
      });
      const allowed = agent.servers ? new Set(agent.servers) : undefined;
      agent.tools?.forEach((t, i) => {
        const sep = t.indexOf("__");
        if (sep <= 0 || sep + 2 >= t.length) {
          ctx.addIssue({ code: "custom", path: [...base, "tools", i], message: `"${t}" must be an exact server__tool name` });
          return;
        }
        const s = t.slice(0, sep);
        if (!servers.has(s)) ctx.addIssue({ code: "custom", path: [...base, "tools", i], message: unknownServer(s, servers) });
        else if (allowed && !allowed.has(s)) {
          ctx.addIssue({ code: "custom", path: [...base, "tools", i], message: `server "${s}" is not in this agent's servers list` });
        }
      });
      checkPins(agent.pin, [...base, "pin"], allowed);
      if (agent.mode === "direct") {
        for (const key of ["tools", "pin", "tool_schema_budget"] as const) {
          if (agent[key] !== undefined) {
            ctx.addIssue({ code: "custom", path: [...base, key], message: `${key} applies only to gateway mode (this agent is direct)` });
          }
        }
      }
    }
    for (const issue of guardIssues(c, (name) => unknownServer(name, servers))) ctx.addIssue({ code: "custom", ...issue });
    const metricsListen = c.telemetry?.metrics?.listen;
    if (metricsListen !== undefined) {
      const addr = parseListen(metricsListen);
      if (!addr) ctx.addIssue({ code: "custom", path: ["telemetry", "metrics", "listen"], message: 'listen must be HOST:PORT on loopback, e.g. "127.0.0.1:9464"' });
      else if (!isLoopbackAddress(addr.host)) {
        ctx.addIssue({ code: "custom", path: ["telemetry", "metrics", "listen"], message: `the metrics port listens on loopback only (127.0.0.1, ::1 or localhost), not ${addr.host}` });
      }
    }
    c.telemetry?.metrics?.scrape_agents?.forEach((a, i) => {
      if (!Object.hasOwn(c.agents, a)) {
        const known = Object.keys(c.agents).sort();
        ctx.addIssue({ code: "custom", path: ["telemetry", "metrics", "scrape_agents", i], message: `unknown agent "${a}"${known.length ? `; configured agents: ${known.join(", ")}` : " (no agents are configured)"}` });
      }
    });
  });

/** Whether a host names this machine's loopback interface (localhost, ::1, 127.x.x.x). */
export function isLoopbackAddress(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

export type ServerConfig = z.output<typeof serverSchema>;
export type OAuthConfig = z.output<typeof oauthSchema>;
export type AgentConfig = z.output<typeof agentSchema>;
export type Config = z.output<typeof configSchema>;
export type EmbeddingsConfig = z.output<typeof embeddingsSchema>;
export type { AgentLimits, ServerLimits, TelemetryConfig } from "./ops.js";
export type RawConfig = z.input<typeof configSchema>;

/** The server a pin names ("github", "github__*", "github__search" → "github"). */
export function pinServer(pin: string): string {
  const i = pin.indexOf("__");
  return i < 0 ? pin : pin.slice(0, i);
}

function pinProblem(pin: string, servers: Set<string>): string | undefined {
  const i = pin.indexOf("__");
  if (i === 0) return `"${pin}" must start with a server name`;
  if (i > 0) {
    const rest = pin.slice(i + 2);
    if (rest === "") return `"${pin}" ends with "__"; use "${pin.slice(0, i)}" or "${pin.slice(0, i)}__*"`;
    if (rest !== "*" && rest.includes("*")) return `"${pin}": the only wildcard allowed is a whole "server__*"`;
  } else if (pin.includes("*")) {
    return `"${pin}": the only wildcard allowed is a whole "server__*"`;
  }
  const s = pinServer(pin);
  return servers.has(s) ? undefined : unknownServer(s, servers);
}

function unknownServer(name: string, servers: Set<string>): string {
  const known = [...servers].sort();
  return `unknown server "${name}"${known.length ? `; configured servers: ${known.join(", ")}` : " (no servers are configured)"}`;
}

export interface ListenAddress {
  host: string;
  port: number;
}

/** Parses "HOST:PORT" ("[::1]:9820" for IPv6); undefined when malformed. */
export function parseListen(text: string): ListenAddress | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(text.trim());
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  const host = (m[1] ?? m[2] ?? "").trim() || "127.0.0.1";
  return { host, port };
}

/** A pinned root is an absolute path, `~` or `~/...`, or a file:// URI. */
function rootProblem(root: string): string | undefined {
  if (root.startsWith("file://")) {
    try {
      new URL(root);
      return undefined;
    } catch {
      return `"${root}" is not a valid file:// URI`;
    }
  }
  if (root === "~" || root.startsWith("~/") || root.startsWith("/")) return undefined;
  return `"${root}" must be an absolute path, ~/..., or a file:// URI`;
}

function urlProblem(url: string): string | undefined {
  if (!/^https?:\/\//i.test(url)) return "url must start with http:// or https://";
  try {
    new URL(url);
    return undefined;
  } catch {
    return "url must be an absolute http(s) URL such as http://127.0.0.1:8080/mcp";
  }
}

export const DEFAULT_LISTEN = "127.0.0.1:9820";

/** Whether the server's names are published as `server__name` (the default) or as its own. */
export function isNamespaced(s: ServerConfig): boolean {
  return s.namespace !== false;
}

/** Whether each upstream session of the daemon gets its own connection to this server. */
export function isPerSession(s: ServerConfig): boolean {
  return s.connection === "per-session";
}

export function isRemote(s: ServerConfig): boolean {
  return s.url !== undefined;
}
