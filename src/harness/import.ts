// `mcphub init --from-agents`: the servers the installed harnesses declare, as mcphub servers.
// Nothing is lost and nothing leaks:
//  - the same server declared by several harnesses (same command, args, url and env names) is
//    imported once; a different server under a name already taken is kept under a new name
//    (`memory-cursor`), with a note saying why;
//  - a literal secret in a harness entry (an Authorization or API-key header, an env value under
//    a credential-like name or shaped like a well-known token) is not copied into the config: it
//    is handed back as a vault secret to store, and the config refers to it (`vault://P/K` for a
//    header, `vault: P` + `vault_only` for env), which is what the gateway resolves at start.
// This module only plans: the caller stores the secrets and writes the config.
import { RESERVED_SERVER_NAME } from "../config/schema.js";
import { describeTarget, entryIdentity } from "./identity.js";
import { scanHarnesses } from "./scan.js";
import type { NeutralEntry } from "./types.js";

const SERVER_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** Header names whose values are credentials. */
const SECRET_HEADER_RE = /^(authorization|proxy-authorization|cookie|x-api-key|api-key|x-auth-token)$|token|secret|key|auth|pass/i;
/** Env names whose values are credentials (as the downstream redaction treats them). */
const SECRET_ENV_RE = /pass|token|secret|key|auth|credential|bearer|cookie|session|(?:^|_)pat(?:_|$)/i;
/** Shapes of well-known tokens, wherever they appear. */
const TOKEN_VALUE_RE = /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|sk-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|glpat-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{36})\b/;
/** A value that names a variable rather than holding a secret: `${GITHUB_TOKEN}`, `$env:X`. */
const REFERENCE_RE = /^\$\{?[A-Za-z_][A-Za-z0-9_:]*\}?$|^\$env:|^vault:\/\//;

export interface ImportedSecret {
  /** `PROJECT/KEY` in the vault. */
  ref: string;
  value: string;
  /** Where it was found, for the summary: "header Authorization of github (claude)". */
  from: string;
}

export interface ImportNote {
  source: string;
  name: string;
  /** What happened to the entry. */
  kind: "renamed" | "merged" | "skipped" | "secret" | "warning";
  /** The server's name in the config, when it has one. */
  as?: string;
  text: string;
}

export interface ImportPlan {
  servers: Record<string, Record<string, unknown>>;
  agents: Record<string, { type: string; path: string; mode: "gateway" }>;
  /** Harness types found, in registry order. */
  sources: string[];
  /** Per harness, which entries became which servers. */
  perSource: { source: string; path: string; servers: { name: string; as: string }[] }[];
  secrets: ImportedSecret[];
  notes: ImportNote[];
}

/** Whether a header's value is a credential to keep out of the config. */
export function isSecretHeader(name: string, value: string): boolean {
  if (REFERENCE_RE.test(value.trim())) return false;
  return SECRET_HEADER_RE.test(name) || TOKEN_VALUE_RE.test(value);
}

/** Whether an env value is a credential to keep out of the config. */
export function isSecretEnv(name: string, value: string): boolean {
  const v = value.trim();
  if (v === "" || REFERENCE_RE.test(v)) return false;
  if (TOKEN_VALUE_RE.test(v)) return true;
  // A credential-like name with a value that is not a plain word ("true", a path, a URL).
  return SECRET_ENV_RE.test(name) && v.length >= 8 && !/^(?:true|false|yes|no|on|off|\d+)$/i.test(v) && !/^[./~]/.test(v) && !/^[a-z]+:\/\/[^@]*$/i.test(v);
}

/** A vault key for a header name: env-variable shape (`X-API-Key` → `X_API_KEY`). */
function vaultKey(header: string): string {
  const k = header.replace(/[^A-Za-z0-9_]/g, "_");
  return /^[A-Za-z_]/.test(k) ? k : `_${k}`;
}

/** Plans the import of every installed harness under `home` (`tildify` writes their paths as `~/...`). */
export async function planImport(home: string, tildify: (path: string) => string): Promise<ImportPlan> {
  const found = await scanHarnesses(home);
  const plan: ImportPlan = { servers: {}, agents: {}, sources: [], perSource: [], secrets: [], notes: [] };
  /** identity → the config name it was imported as, and from where. */
  const byIdentity = new Map<string, { as: string; source: string; entry: NeutralEntry }>();
  const taken = new Map<string, string>(); // config name → source that took it
  const byName = new Map<string, NeutralEntry>(); // config name → the entry imported under it
  for (const h of found) {
    const source = h.adapter.type;
    if (h.error) {
      plan.notes.push({ source, name: "(file)", kind: "skipped", text: `${tildify(h.path)} could not be read: ${h.error}` });
      continue;
    }
    plan.sources.push(source);
    plan.agents[source] = { type: source, path: tildify(h.path), mode: "gateway" };
    const mine: { name: string; as: string }[] = [];
    for (const e of h.entries) {
      if (!SERVER_NAME_RE.test(e.name) || e.name.includes("__") || e.name.toLowerCase() === RESERVED_SERVER_NAME) {
        plan.notes.push({ source, name: e.name, kind: "skipped", text: `${e.name} (${source}) is not a valid mcphub server name; not imported` });
        continue;
      }
      const id = entryIdentity(e);
      const same = byIdentity.get(id);
      if (same) {
        mine.push({ name: e.name, as: same.as });
        const differ = [...valueDifferences("env", same.entry.env, e.env), ...valueDifferences("header", same.entry.headers, e.headers)];
        if (differ.length) {
          plan.notes.push({
            source,
            name: e.name,
            kind: "warning",
            as: same.as,
            text: `${source}'s ${e.name} runs the same server as ${same.as} (from ${same.source}) with a different ${differ.join(", ")}; the gateway uses the one from ${same.source}`,
          });
        }
        if (same.as !== e.name) {
          plan.notes.push({ source, name: e.name, kind: "merged", as: same.as, text: `${source}'s ${e.name} is the same server as ${same.as} (from ${same.source}); imported once, as ${same.as}` });
        }
        continue;
      }
      const inline = inlineSecret(e);
      if (inline) {
        plan.notes.push({
          source,
          name: e.name,
          kind: "skipped",
          text: `${e.name} (${source}) passes what looks like a token ${inline}, which mcphub cannot take from the vault; not imported (the harness keeps it). Pass it as an env variable or a header instead, then import again`,
        });
        continue;
      }
      let as = e.name;
      if (taken.has(as)) {
        as = freeName(`${e.name}-${source}`, taken);
        const first = byName.get(e.name);
        plan.notes.push({
          source,
          name: e.name,
          kind: "renamed",
          as,
          text: `${source}'s ${e.name} runs ${describeTarget(e)}, not what ${taken.get(e.name)}'s ${e.name} runs (${first ? describeTarget(first) : "another command"}); imported as ${as}`,
        });
      }
      taken.set(as, source);
      byName.set(as, e);
      byIdentity.set(id, { as, source, entry: e });
      plan.servers[as] = toServer(as, e, source, plan);
      mine.push({ name: e.name, as });
    }
    for (const name of h.unreadable) plan.notes.push({ source, name, kind: "skipped", text: `${name} (${source}) is an entry mcphub does not understand; not imported` });
    plan.perSource.push({ source, path: h.path, servers: mine });
  }
  return plan;
}

/** Where an entry carries a secret mcphub cannot move into the vault (a command-line argument, the URL). */
function inlineSecret(e: NeutralEntry): string | undefined {
  const arg = (e.args ?? []).findIndex((a) => TOKEN_VALUE_RE.test(a));
  if (arg >= 0) return `on its command line (args[${arg}])`;
  if (e.url !== undefined && (TOKEN_VALUE_RE.test(e.url) || /\/\/[^/@]*:[^/@]+@/.test(e.url) || /[?&][^=&]*(?:key|token|secret)[^=&]*=[^&]{8,}/i.test(e.url))) return "in its URL";
  return undefined;
}

/** Names whose values differ between two maps with the same keys ("env GITHUB_TOKEN"). */
function valueDifferences(label: string, a: Record<string, string> | undefined, b: Record<string, string> | undefined): string[] {
  return Object.keys(a ?? {}).filter((k) => (a ?? {})[k] !== (b ?? {})[k]).map((k) => `${label} ${k}`);
}

function freeName(base: string, taken: ReadonlyMap<string, string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** The server entry for the config, with its literal secrets swapped for vault references. */
function toServer(as: string, e: NeutralEntry, source: string, plan: ImportPlan): Record<string, unknown> {
  const secret = (key: string, value: string, from: string) => {
    const ref = `${as}/${key}`;
    plan.secrets.push({ ref, value, from });
    plan.notes.push({ source, name: e.name, kind: "secret", as, text: `${from}: moved into the vault as ${ref}` });
    return ref;
  };
  if (e.url !== undefined) {
    let headers: Record<string, string> | undefined;
    if (e.headers) {
      headers = {};
      for (const [k, v] of Object.entries(e.headers)) {
        headers[k] = isSecretHeader(k, v) ? `vault://${secret(vaultKey(k), v, `header ${k} of ${as} (${source})`)}` : v;
      }
    }
    return { url: e.url, ...(e.transport === "sse" ? { transport: "sse" } : {}), ...(headers ? { headers } : {}) };
  }
  const env: Record<string, string> = {};
  const fromVault: string[] = [];
  for (const [k, v] of Object.entries(e.env ?? {})) {
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && isSecretEnv(k, v)) {
      secret(k, v, `env ${k} of ${as} (${source})`);
      fromVault.push(k);
    } else env[k] = v;
  }
  return {
    command: e.command,
    ...(e.args?.length ? { args: e.args } : {}),
    ...(Object.keys(env).length ? { env } : {}),
    ...(fromVault.length ? { vault: as, vault_only: fromVault } : {}),
  };
}
