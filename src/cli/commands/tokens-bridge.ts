// Creates a daemon bearer token for an agent through the gateway's TokenStore
// (src/gateway/tokens.ts). The store keeps only hashes, so sync remembers the plaintext in its
// 0600 state file (see src/harness/state.ts). Loaded lazily: the token store is only needed when
// the config sets `listen`, and a missing or older store must not break every other command.
import { CliError } from "../context.js";

interface TokenStoreLike {
  create(agent: string): unknown;
}
interface TokenModule {
  TokenStore?: { open(dataDir: string): TokenStoreLike };
}

const TOKENS_MODULE = "../../gateway/tokens.js";

export async function createAgentToken(dataDir: string, agent: string): Promise<string> {
  let mod: TokenModule;
  try {
    mod = (await import(TOKENS_MODULE)) as TokenModule;
  } catch {
    throw new CliError("config sets listen, but this build has no daemon token store; remove listen or update mcphub");
  }
  if (!mod.TokenStore) throw new CliError("the daemon token store is unavailable in this build");
  const created = await mod.TokenStore.open(dataDir).create(agent);
  if (typeof created === "string") return created;
  if (typeof created === "object" && created !== null && "token" in created && typeof created.token === "string") {
    return created.token;
  }
  throw new CliError("the daemon token store returned no token");
}
