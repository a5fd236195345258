// What every front door is started with: the validated config (and its file, followed for hot
// reload), the data directory, the environment, the agent whose scope it serves, and the logger.
import type { Config, ListenAddress } from "../config/schema.js";
import type { Store } from "../store/index.js";
import type { LogFormat, Logger } from "../util/log.js";

export interface ServeOptions {
  config: Config;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  agent?: string;
  log: Logger;
  /** The config file: followed for hot reload, and named in the sign-in command a needs_auth server shows. */
  configPath?: string;
  /** How log lines look: human lines (default) or one JSON object a line (`--log-format json`). */
  logFormat?: LogFormat;
  /** `mcp serve`: serve /metrics on this loopback address (`--metrics-listen`, telemetry.metrics.listen). */
  metricsListen?: ListenAddress;
  /** The shared state (PostgreSQL in team mode); absent, the data directory's files. */
  store?: Store;
  /** Every known harness's config file (from the CLI's harness registry): sandboxed servers never see them. */
  harnessFiles?: readonly string[];
}
