// Discovery of harness files for `mcphub init --from-agents` and `mcphub agents`: which default
// harness paths exist under the home directory, and the MCP servers each already declares.
import { dirname, resolve } from "node:path";
import { openDocument } from "./documents.js";
import { exists, readIfExists } from "./files.js";
import { allAdapters } from "./registry.js";
import { GATEWAY_ENTRY } from "./desired.js";
import type { HarnessAdapter, NeutralEntry } from "./types.js";

export interface FoundHarness {
  adapter: HarnessAdapter;
  path: string;
  entries: NeutralEntry[];
  /** Entries present but not understood (kept out of the import). */
  unreadable: string[];
  error?: string;
}

/** The home directory harness files are looked for under: $MCPHUB_HOME_DIR, else $HOME. */
export function harnessHome(env: NodeJS.ProcessEnv, fallback: string): string {
  return env.MCPHUB_HOME_DIR || env.HOME || fallback;
}

/** Reads one harness file's MCP entries (the gateway's own entry excluded). */
export async function readHarness(adapter: HarnessAdapter, path: string): Promise<FoundHarness | undefined> {
  const bytes = await readIfExists(path);
  if (bytes === undefined) return undefined;
  try {
    const doc = openDocument(adapter, path, bytes.toString("utf8"));
    const entries: NeutralEntry[] = [];
    const unreadable: string[] = [];
    for (const [name, raw] of doc.entries()) {
      if (name === GATEWAY_ENTRY) continue;
      const e = adapter.codec.decode(name, raw);
      if (e) entries.push(e);
      else unreadable.push(name);
    }
    return { adapter, path, entries, unreadable };
  } catch (err) {
    return { adapter, path, entries: [], unreadable: [], error: err instanceof Error ? err.message : String(err) };
  }
}

/** Every harness whose default file exists under `home`, in registry order. */
export async function scanHarnesses(home: string): Promise<FoundHarness[]> {
  const found: FoundHarness[] = [];
  for (const adapter of allAdapters()) {
    const f = await readHarness(adapter, adapter.defaultPath(home));
    if (f) found.push(f);
  }
  return found;
}

/**
 * Whether a harness looks installed: its file exists, or the folder holding it (unless that is the
 * home folder itself, which always exists), or one of its markers.
 */
export async function harnessInstalled(adapter: HarnessAdapter, home: string): Promise<boolean> {
  const p = adapter.defaultPath(home);
  if (await exists(p)) return true;
  const dir = dirname(p);
  if (resolve(dir) !== resolve(home) && (await exists(dir))) return true;
  for (const m of adapter.markers?.(home) ?? []) if (await exists(m)) return true;
  return false;
}
