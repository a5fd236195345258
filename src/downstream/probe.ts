// `mcphub doctor --probe`: one real handshake and tools/list against one server, then close
// (killing a stdio server's whole tree). Never throws; failures come back as a sanitised reason.
import type { Prompt, Resource, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ServerConfig } from "../config/schema.js";
import { DOWNSTREAM_CLIENT_CAPABILITIES } from "./types.js";
import { ConnectError, errorText, openSession, type SessionPeer } from "./session.js";
import { sanitizeLine } from "./sanitize.js";
import { LockedError, NeedsAuthError, type RemoteAuth, type SecretResolver } from "./types.js";

export interface ProbeResult {
  handshake_ok: boolean;
  tool_count?: number;
  /** Wire names of the tools listed (for checks such as `mcphub pin`). */
  tools?: string[];
  latency_ms: number;
  error?: string;
  /** The server needs sign-in; `error` names the command. */
  needs_auth?: boolean;
  /** The child's sanitised stderr tail, when a stdio server failed to start and wrote any. */
  stderr_tail?: string;
  serverVersion?: { name: string; version: string };
  /** What the server listed, as the gateway's catalogue would hold it (for the catalogue cache). */
  listing?: { tools: Tool[]; resources: Resource[]; resourceTemplates: ResourceTemplate[]; prompts: Prompt[]; instructions?: string };
}

/**
 * The probe declares what the gateway declares, so the server lists what the gateway would see;
 * it has no harness behind it, so it answers roots/list with no roots and refuses the rest.
 */
const PROBE_PEER: SessionPeer = {
  capabilities: DOWNSTREAM_CLIENT_CAPABILITIES,
  request: async (req) => {
    if (req.method === "roots/list") return { roots: [] };
    throw new Error(`${req.method} is not answered during \`mcphub doctor --probe\` (no harness is connected)`);
  },
  notification: () => undefined,
};

export async function probeServer(
  name: string,
  cfg: ServerConfig,
  opts: {
    timeoutMs: number;
    secrets?: SecretResolver;
    auth?: RemoteAuth;
    clientInfo?: { name: string; version: string };
    allServers?: Record<string, ServerConfig>;
    /** Paths a sandboxed server never sees beyond the built-in ones (harness files, the data dir). */
    sandboxProtect?: readonly string[];
    /** Server→client traffic during the probe; default: the gateway's capabilities, nothing forwarded. */
    peer?: SessionPeer;
  },
): Promise<ProbeResult> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  try {
    const session = await openSession({
      name,
      cfg,
      allServers: opts.allServers ?? { [name]: cfg },
      clientInfo: opts.clientInfo ?? { name: "mcphub-probe", version: "0" },
      secrets: opts.secrets,
      ...(opts.auth ? { auth: opts.auth } : {}),
      timeoutMs: opts.timeoutMs,
      ...(opts.sandboxProtect ? { sandboxProtect: opts.sandboxProtect } : {}),
      peer: opts.peer ?? PROBE_PEER,
    });
    const result: ProbeResult = {
      handshake_ok: true,
      tool_count: session.tools.length,
      tools: session.tools.map((t) => t.name),
      latency_ms: latency(),
      listing: {
        tools: session.tools,
        resources: session.resources,
        resourceTemplates: session.resourceTemplates,
        prompts: session.prompts,
        ...(session.instructions !== undefined ? { instructions: session.instructions } : {}),
      },
    };
    const v = session.serverVersion;
    if (v) result.serverVersion = v;
    await session.close();
    return result;
  } catch (err) {
    if (err instanceof NeedsAuthError) return { handshake_ok: false, latency_ms: latency(), error: err.message, needs_auth: true };
    const error =
      err instanceof LockedError
        ? `locked: ${err.message}`
        : err instanceof ConnectError
          ? err.message
          : sanitizeLine(errorText(err), opts.secrets?.knownSecretValues() ?? []);
    const tail = err instanceof ConnectError ? err.stderrTail : undefined;
    return { handshake_ok: false, latency_ms: latency(), error, ...(tail ? { stderr_tail: tail } : {}) };
  }
}
