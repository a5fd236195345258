// Creates a daemon bearer token for an agent in the gateway's TokenStore (src/serve/tokens.ts).
// The store keeps only hashes, so sync remembers the plaintext in its 0600 state file (see
// src/harness/state.ts) to keep later syncs no-ops.
// In team mode the tokens are the configured store's (PostgreSQL), so a token sync creates is
// accepted by every replica.
import { TokenStore } from "../../serve/tokens.js";
import type { Store } from "../../store/index.js";

export async function createAgentToken(where: string | Store, agent: string): Promise<string> {
  const { token } = await TokenStore.open(where).create(agent);
  return token;
}

export async function agentTokenValid(where: string | Store, token: string, agent: string): Promise<boolean> {
  return (await TokenStore.open(where).verify(token))?.agent === agent;
}

export async function liveTokenIds(where: string | Store, agent: string): Promise<string[]> {
  return (await TokenStore.open(where).list()).filter((t) => t.agent === agent && t.revoked === undefined).map((t) => t.id);
}
