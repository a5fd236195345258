// Harness adapters and sync: the only part of mcphub that touches harness config files.
export * from "./types.js";
export { ADAPTERS, adapterFor, allAdapters } from "./registry.js";
export { canonicalEntry, sameEntry } from "./codecs.js";
export { HarnessFileError, openDocument, type HarnessDocument } from "./documents.js";
export {
  GATEWAY_ENTRY,
  PENDING_TOKEN,
  configArgs,
  daemonUrl,
  desiredEntries,
  installedBin,
  isScoped,
  selfCommand,
  type SelfCommand,
} from "./desired.js";
export {
  SyncError,
  agentAdapter,
  agentFilePath,
  agentOf,
  planOffload,
  planSync,
  publicPlan,
  rollbackPlan,
  withOffload,
  writePlan,
  type RollbackResult,
  type SyncAction,
  type SyncActionKind,
  type SyncContext,
  type SyncPlan,
  type WriteResult,
} from "./sync.js";
export { harnessHome, harnessInstalled, readHarness, scanHarnesses, type FoundHarness } from "./scan.js";
export { readState, statePath, type SyncState } from "./state.js";
export { describeTarget, entryIdentity, findDuplicates, serverIdentity, type Duplicate, type NameClash } from "./identity.js";
