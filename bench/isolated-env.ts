// The environment a bench runs mcphub in: its own HOME and data dir (nothing of the user's config,
// vault, tokens or catalogue cache is read or written) and no OS keychain (a bench must not prompt).
import { join } from "node:path";

export function isolatedEnv(home: string, dataDir = join(home, "data")): Record<string, string> {
  return { ...(process.env as Record<string, string>), HOME: home, MCPHUB_DATA_DIR: dataDir, MCPHUB_KEYCHAIN: "off" };
}
