// Running mcphub as a service: where a running daemon listens (address.ts, written by the daemon,
// read by the CLI), whether it answers (health.ts), and the systemd / launchd files that keep it
// running (units.ts, manager.ts). Nothing here imports the gateway: the daemon and the CLI both
// sit above it.
export { DAEMONS_DIR, findDaemon, liveDaemons, pidAlive, reachableBase, recordDaemon, type DaemonRecord } from "./address.js";
export { healthProblem } from "./health.js";
export { SERVICE_ENV_ALLOWLIST, launchdLabel, launchdPlist, serviceEnv, systemdUnit, systemdWord, type ServiceSpec } from "./units.js";
export {
  SERVICE_NAME_RE,
  installService,
  installedCommand,
  launchdLogPath,
  lingerEnabled,
  logsHint,
  managerState,
  serviceFile,
  servicePlatform,
  serviceText,
  uninstallService,
  type InstallResult,
  type ManagerState,
  type ServicePlatform,
  type UninstallResult,
} from "./manager.js";
