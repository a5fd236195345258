// Creates a daemon bearer token for an agent in the gateway's TokenStore (src/serve/tokens.ts).
// The store keeps only hashes, so sync remembers the plaintext in its 0600 state file (see
// src/harness/state.ts) to keep later syncs no-ops.
import { TokenStore } from "../../serve/tokens.js";

export async function createAgentToken(dataDir: string, agent: string): Promise<string> {
  const { token } = await TokenStore.open(dataDir).create(agent);
  return token;
}

export async function agentTokenValid(dataDir: string, token: string, agent: string): Promise<boolean> {
  return (await TokenStore.open(dataDir).verify(token))?.agent === agent;
}

export async function liveTokenIds(dataDir: string, agent: string): Promise<string[]> {
  return (await TokenStore.open(dataDir).list()).filter((t) => t.agent === agent && t.revoked === undefined).map((t) => t.id);
}
