// Sync bookkeeping in <data dir>/state.json (0600 in a 0700 folder, replaced atomically):
//  - per agent, the harness file it was synced to and the entry names mcphub wrote there
//    (only those may ever be removed by a later sync);
//  - per plan id, the backup taken before writing (or the fact that the file did not exist),
//    so `sync --rollback PLAN` can restore the file byte for byte;
//  - per agent, the daemon bearer token written into its URL entry. The token store keeps only
//    hashes, so the plaintext must be remembered somewhere to keep later syncs idempotent; it is
//    already in the harness file itself, and this file is as private as that one.
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { bareRecord } from "../config/reserved-keys.js";
import { writeAtomic } from "./files.js";

const agentStateSchema = z.object({
  path: z.string(),
  owned: z.array(z.string()),
});

const planSchema = z.object({
  agent: z.string(),
  path: z.string(),
  /** Backup path; null when the file did not exist before the write (rollback deletes it). */
  backup: z.string().nullable(),
  created_at: z.string(),
  kind: z.enum(["sync", "offload"]).default("sync"),
  /** The agent's owned set before this plan was written, restored by rollback. */
  owned_before: z.array(z.string()).default([]),
  owned_path_before: z.string().nullable().default(null),
  /** The harness type, to read the file again at rollback time. */
  type: z.string().optional(),
  /** SHA-256 of the bytes this plan wrote, and of each MCP entry in them: a rollback compares. */
  written_sha256: z.string().optional(),
  written_entries: z.record(z.string(), z.string()).optional(),
  /** Set once the plan was rolled back: a second rollback would overwrite later changes. */
  rolled_back: z.object({ at: z.string(), saved: z.string().nullable() }).optional(),
});

const stateSchema = z.object({
  version: z.literal(1).default(1),
  agents: z.record(z.string(), agentStateSchema).default({}),
  plans: z.record(z.string(), planSchema).default({}),
  tokens: z.record(z.string(), z.string()).default({}),
});

export type SyncState = z.output<typeof stateSchema>;
export type PlanRecord = z.output<typeof planSchema>;

export function statePath(dataDir: string): string {
  return join(dataDir, "state.json");
}

export async function readState(dataDir: string): Promise<SyncState> {
  let text: string;
  try {
    text = await readFile(statePath(dataDir), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { version: 1, agents: bareRecord({}), plans: bareRecord({}), tokens: bareRecord({}) };
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${statePath(dataDir)} is not valid JSON; move it aside to start sync bookkeeping afresh`);
  }
  const parsed = stateSchema.safeParse(json);
  if (!parsed.success) {
    throw new Error(`${statePath(dataDir)} has an unexpected shape; move it aside to start sync bookkeeping afresh`);
  }
  // Keyed by agent names and plan ids: an agent called `constructor` must find nothing inherited.
  const s = parsed.data;
  return { ...s, agents: bareRecord(s.agents), plans: bareRecord(s.plans), tokens: bareRecord(s.tokens) };
}

export async function writeState(dataDir: string, state: SyncState): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await writeAtomic(statePath(dataDir), `${JSON.stringify(state, null, 2)}\n`, 0o600);
}

/** The names mcphub owns in an agent's file, provided the agent still points at the same file. */
export function ownedNames(state: SyncState, agent: string, path: string): Set<string> {
  const rec = state.agents[agent];
  return new Set(rec && rec.path === path ? rec.owned : []);
}
