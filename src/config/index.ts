// The config module's public API: find, load, validate and edit mcphub's config file.
export * from "./schema.js";
export { ConfigError, formatPath, type ConfigIssue } from "./errors.js";
export {
  CONFIG_FILE_NAMES,
  dataDir,
  defaultConfigDir,
  displayPath,
  expandHome,
  formatFromPath,
  homeDir,
  resolveConfigPath,
  type ConfigFormat,
  type ConfigSource,
  type PathOptions,
  type ResolvedConfigPath,
} from "./paths.js";
export { loadConfig, parseConfigText, parseRawText, validateConfig, type LoadOptions, type LoadedConfig } from "./load.js";
export {
  editConfig,
  writeNewConfig,
  NEW_FILE_MODE,
  type ConfigEditor,
  type ConfigKeyPath,
  type EditOptions,
  type NewConfigContent,
} from "./edit.js";
export { effectiveSandbox, isSandboxed, ROOTS_ENTRY, SANDBOX_NETWORKS, type SandboxConfig, type SandboxNetwork, type SandboxSettings } from "./sandbox.js";
export { CONFIRM_LEVELS, DEFAULT_CONFIRM_TIMEOUT_MS, EFFECT_CLASSES, type ConfirmLevel, type EffectClass, type PolicyConfig } from "./policy.js";
export { enabledServers, idleTimeoutOf, resolveAgent, serverKind, startModeOf, type ServerKind } from "./queries.js";
export { emptiesConfig, watchConfig, type ConfigWatcher, type ConfigWatchOptions } from "./watch.js";
