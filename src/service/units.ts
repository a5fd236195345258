// The files that keep `mcphub up` running across logins and reboots: a systemd user unit (Linux)
// and a launchd agent (macOS). Pure text builders; manager.ts writes and loads them.
//
// What goes in: the absolute command line (node, bin/mcphub.js, --config ABS, up), the working
// directory, and an allowlist of environment variables that say *where* things are (PATH for the
// servers' commands, the data and home directories, the keychain switch, a passphrase *file*).
// What never goes in: a secret. MCPHUB_VAULT_PASSPHRASE is not on the list, and neither is any
// other variable; a unit file is world-readable by convention and ends up in backups.

export interface ServiceSpec {
  /** Unit / agent name: `mcphub` → mcphub.service, dev.mcphub.mcphub. */
  name: string;
  /** The full command line, argv[0] absolute. */
  argv: string[];
  workingDirectory: string;
  env: Record<string, string>;
  /** The config file the daemon runs, for the description. */
  configPath: string;
  /** docs/daemon.md of this install, when present (a file: URL for `Documentation=`). */
  docs?: string;
  /** launchd only: the file stdout and stderr go to. */
  logPath?: string;
}

/** Variables carried into the service: locations and switches only, never values that unlock anything. */
export const SERVICE_ENV_ALLOWLIST = [
  "PATH",
  "MCPHUB_DATA_DIR",
  "MCPHUB_HOME_DIR",
  "MCPHUB_KEYCHAIN",
  "MCPHUB_VAULT_PASSPHRASE_FILE",
  "MCPHUB_LOG_LEVEL",
  "MCPHUB_NO_CODE_CACHE",
  "MCPHUB_NO_BUNDLE",
  "NODE_EXTRA_CA_CERTS",
  "HTTPS_PROXY",
  "HTTP_PROXY",
  "NO_PROXY",
] as const;

/** The allowlisted part of `env` (proxy variables only without credentials in them). */
export function serviceEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of SERVICE_ENV_ALLOWLIST) {
    const v = env[k];
    if (v === undefined || v === "") continue;
    // A proxy URL with user:password@ carries a secret: left out (the unit says so by its absence).
    if (/PROXY$/.test(k) && /\/\/[^/@]*:[^/@]*@/.test(v)) continue;
    out[k] = v;
  }
  return out;
}

/** One word of a systemd command line: quoted when needed, `%` and `$` escaped (systemd.service(5)). */
export function systemdWord(word: string): string {
  const escaped = word.replace(/%/g, "%%").replace(/\$/g, "$$$$");
  if (escaped !== "" && !/[\s"'\\;]/.test(escaped)) return escaped;
  return `"${escaped.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** A quoted `KEY=value` for `Environment=` (no `$` expansion there, `%` specifiers are). */
function systemdAssignment(key: string, value: string): string {
  const v = `${key}=${value}`.replace(/%/g, "%%");
  return `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** The line a unit file comment may carry: no newlines from a path. */
const oneLine = (s: string) => s.replace(/[\r\n]+/g, " ");

export function systemdUnit(spec: ServiceSpec): string {
  const lines = [
    "# Written by `mcphub service install`; remove it with `mcphub service uninstall`.",
    "# Logs: journalctl --user -u " + oneLine(spec.name),
    "[Unit]",
    `Description=mcphub gateway daemon (${oneLine(spec.configPath)})`,
    ...(spec.docs ? [`Documentation=file://${encodeURI(spec.docs)}`] : []),
    // At most 5 failed starts in a minute; after that systemd stops trying (see `service status`).
    "StartLimitIntervalSec=60",
    "StartLimitBurst=5",
    "",
    "[Service]",
    "Type=simple",
    `ExecStart=${spec.argv.map(systemdWord).join(" ")}`,
    // A single path: systemd takes it unquoted (spaces included); only `%` needs escaping.
    `WorkingDirectory=${oneLine(spec.workingDirectory).replace(/%/g, "%%")}`,
    ...Object.keys(spec.env)
      .sort()
      .map((k) => `Environment=${systemdAssignment(k, spec.env[k] ?? "")}`),
    "Restart=on-failure",
    "RestartSec=2",
    // SIGTERM answers calls in flight, drains (up to 10 s) and exits 0.
    "KillSignal=SIGTERM",
    "TimeoutStopSec=20",
    // stdout and stderr go to the journal, tagged with the unit's name.
    `SyslogIdentifier=${oneLine(spec.name)}`,
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ];
  return lines.join("\n");
}

const xml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** The launchd label of a service name. */
export function launchdLabel(name: string): string {
  return `dev.mcphub.${name}`;
}

export function launchdPlist(spec: ServiceSpec): string {
  const str = (s: string) => `<string>${xml(s)}</string>`;
  const env = Object.keys(spec.env)
    .sort()
    .map((k) => `    <key>${xml(k)}</key>\n    ${str(spec.env[k] ?? "")}`)
    .join("\n");
  const log = spec.logPath ?? "/dev/null";
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by \`mcphub service install\`; remove it with \`mcphub service uninstall\`. -->
<plist version="1.0">
<dict>
  <key>Label</key>
  ${str(launchdLabel(spec.name))}
  <key>ProgramArguments</key>
  <array>
${spec.argv.map((a) => `    ${str(a)}`).join("\n")}
  </array>
  <key>WorkingDirectory</key>
  ${str(spec.workingDirectory)}
  <key>EnvironmentVariables</key>
  <dict>
${env}
  </dict>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ThrottleInterval</key>
  <integer>5</integer>
  <key>ProcessType</key>
  ${str("Background")}
  <key>StandardOutPath</key>
  ${str(log)}
  <key>StandardErrorPath</key>
  ${str(log)}
</dict>
</plist>
`;
}
