// Bridges the vault's secret store to the downstream supervisor: secrets for a stdio server's
// environment (`vault: PROJECT`, filtered by `vault_only` / `vault_prefix`) and `vault://P/K`
// header values for remote servers. The store is opened only when a server first needs it, so
// a gateway without vault-backed servers never unlocks the vault. Anything missing or locked is
// a LockedError: that server fails closed, the others keep working.
import type { ServerConfig } from "../config/schema.js";
import { LockedError, type SecretResolver } from "../downstream/types.js";
import type { Keyring } from "./keys.js";
import { errorText } from "../util/errors.js";
import { SecretStore } from "./secrets.js";

export const VAULT_REF_PREFIX = "vault://";

export class VaultSecretResolver implements SecretResolver {
  private store: Promise<SecretStore> | undefined;
  private readonly known = new Set<string>();

  constructor(private readonly opts: { dataDir: string; env: NodeJS.ProcessEnv; keyring?: () => Promise<Keyring> }) {}

  async envFor(server: string, cfg: ServerConfig): Promise<Record<string, string>> {
    if (cfg.vault === undefined) return {};
    const store = await this.open();
    let secrets: Record<string, string>;
    try {
      secrets = await store.project(cfg.vault);
    } catch (err) {
      throw new LockedError(`vault project "${cfg.vault}" could not be read: ${errorText(err)}`);
    }
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(secrets)) {
      if (cfg.vault_only && !cfg.vault_only.includes(key)) continue;
      if (cfg.vault_prefix !== undefined && !key.startsWith(cfg.vault_prefix)) continue;
      out[key] = value;
      this.known.add(value);
    }
    const missing = (cfg.vault_only ?? []).filter((k) => !(k in out));
    if (missing.length) {
      throw new LockedError(
        `server "${server}" needs ${missing.map((k) => `${cfg.vault}/${k}`).join(", ")}, which the vault does not hold; add with \`mcphub vault set ${cfg.vault}/${missing[0]}\``,
      );
    }
    return out;
  }

  async header(ref: string): Promise<string> {
    if (!ref.startsWith(VAULT_REF_PREFIX)) return ref;
    const name = ref.slice(VAULT_REF_PREFIX.length);
    const store = await this.open();
    let value: string | undefined;
    try {
      value = await store.get(name);
    } catch (err) {
      throw new LockedError(`secret ${name} could not be read: ${errorText(err)}`);
    }
    if (value === undefined) {
      throw new LockedError(`secret ${name} is not in the vault; add it with \`mcphub vault set ${name}\``);
    }
    this.known.add(value);
    return value;
  }

  knownSecretValues(): string[] {
    return [...this.known];
  }

  private async open(): Promise<SecretStore> {
    this.store ??= (async () => {
      const keyring = this.opts.keyring ? await this.opts.keyring() : undefined;
      return SecretStore.open({ dataDir: this.opts.dataDir, env: this.opts.env, ...(keyring ? { keyring } : {}) });
    })();
    try {
      return await this.store;
    } catch (err) {
      // Do not cache a failure: the operator may unlock the vault and the server reconnect.
      this.store = undefined;
      const why = errorText(err);
      throw new LockedError(why.startsWith("vault is locked") ? why : `vault is locked: ${why}`);
    }
  }
}
