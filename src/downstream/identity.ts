// Which parts of a server's config define its connection. Two questions depend on it: does a
// config edit need this server restarted (hot reload), and was a cached catalogue listed from the
// same server (a cache written for another command or URL is not trusted). Routing metadata
// (description, tags, use_when), `start` and `idle_timeout` are not part of the connection.
import { createHash } from "node:crypto";
import type { ServerConfig } from "../config/schema.js";
import { canonicalJson } from "../util/json/canonical.js";

function connectionFields(cfg: ServerConfig, values: boolean) {
  const keysOrValues = (m: Record<string, string> | undefined) =>
    m === undefined ? undefined : values ? m : Object.keys(m).sort();
  return {
    enabled: cfg.enabled,
    command: cfg.command,
    args: cfg.args,
    cwd: cfg.cwd,
    env: keysOrValues(cfg.env),
    url: cfg.url,
    transport: cfg.transport,
    headers: keysOrValues(cfg.headers),
    vault: cfg.vault,
    vault_only: cfg.vault_only,
    vault_prefix: cfg.vault_prefix,
  };
}

/**
 * In-memory identity, values included: any difference means the server must be restarted. The
 * sandbox is part of it (a process's confinement is fixed at launch), but not of the cache
 * fingerprint below: confining a server does not change its tools.
 */
export function connectionKey(cfg: ServerConfig): string {
  return canonicalJson({ ...connectionFields(cfg, true), sandbox: cfg.sandbox });
}

/**
 * A persisted fingerprint for the catalogue cache: a hash over the same fields, but with env and
 * header *names* only, so a secret written into the config never reaches another file, not even
 * hashed. Changing a value keeps the cache (the tools rarely depend on it; the first live listing
 * corrects it anyway); changing the command, args, URL or a name invalidates it.
 */
export function connectionFingerprint(cfg: ServerConfig): string {
  const { enabled: _enabled, ...fields } = connectionFields(cfg, false);
  return createHash("sha256").update(canonicalJson(fields)).digest("hex").slice(0, 32);
}
