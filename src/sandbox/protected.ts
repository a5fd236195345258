// What a sandboxed server never sees unless the operator lists it by name. A sandbox starts from
// an allow-list (the system, the listed paths, what the runtime needs), so most of these are
// simply absent; they matter when a listed or implied path contains them (`read: [~]`, a cwd
// that holds a browser profile, a root the client sent). Each is then covered by an empty,
// unreadable mount.
//  - mcphub's own: the data dir (vault, key file, tokens, receipts) and a passphrase file. These
//    cannot be listed at all.
//  - credentials and profiles the user keeps in HOME: SSH, cloud CLIs, GnuPG, browser profiles,
//    harness sign-ins and mcphub's config; the config files of every harness mcphub knows come in
//    `extra`, from the CLI, which owns the harness registry (this part sits below it).
//  - root-only secrets of the system (shadow files, SSH host keys), for a gateway run as root.
import { join } from "node:path";

export interface ProtectedPath {
  path: string;
  /** mcphub's own secrets: refused when listed, never shown. */
  own: boolean;
  why: string;
}

/** HOME-relative credential stores, by what they hold. */
const HOME_SECRETS: [string, string][] = [
  [".ssh", "SSH keys"],
  [".aws", "AWS credentials"],
  [".config/gcloud", "Google Cloud credentials"],
  [".azure", "Azure credentials"],
  [".kube", "Kubernetes credentials"],
  [".docker", "Docker registry credentials"],
  [".gnupg", "GnuPG keys"],
  [".password-store", "pass password store"],
  [".local/share/keyrings", "GNOME keyring"],
  [".netrc", "netrc credentials"],
  [".git-credentials", "git credentials"],
  [".config/gh", "GitHub CLI token"],
  [".config/hub", "hub token"],
  [".npmrc", "npm registry tokens"],
  [".yarnrc.yml", "yarn registry tokens"],
  [".pypirc", "PyPI tokens"],
  [".cargo/credentials", "crates.io token"],
  [".cargo/credentials.toml", "crates.io token"],
  [".terraform.d/credentials.tfrc.json", "Terraform Cloud token"],
  [".vault-token", "HashiCorp Vault token"],
  [".config/op", "1Password CLI"],
  [".mozilla", "Firefox profiles"],
  [".librewolf", "LibreWolf profiles"],
  [".config/google-chrome", "Chrome profiles"],
  [".config/google-chrome-beta", "Chrome profiles"],
  [".config/chromium", "Chromium profiles"],
  [".config/BraveSoftware", "Brave profiles"],
  [".config/microsoft-edge", "Edge profiles"],
  [".config/vivaldi", "Vivaldi profiles"],
  [".config/opera", "Opera profiles"],
  ["snap/firefox", "Firefox (snap) profiles"],
  ["snap/chromium", "Chromium (snap) profiles"],
  [".var/app/org.mozilla.firefox", "Firefox (flatpak) profiles"],
  [".var/app/com.google.Chrome", "Chrome (flatpak) profiles"],
  ["Library/Application Support/Google/Chrome", "Chrome profiles"],
  ["Library/Application Support/Firefox", "Firefox profiles"],
  ["Library/Application Support/BraveSoftware", "Brave profiles"],
  ["Library/Application Support/Microsoft Edge", "Edge profiles"],
  ["Library/Application Support/Arc", "Arc profiles"],
  ["Library/Safari", "Safari data"],
  ["Library/Cookies", "cookies"],
  ["Library/Keychains", "macOS keychains"],
  [".config/mcphub", "mcphub's config"],
  // Harness sign-ins (the registry below knows their config files, not these).
  [".claude/.credentials.json", "Claude Code credentials"],
  [".codex/auth.json", "Codex CLI credentials"],
  [".gemini/oauth_creds.json", "Gemini CLI credentials"],
];

/** Root-only files of the system that an exposed /etc would otherwise show a gateway run as root. */
const SYSTEM_SECRETS: [string, string][] = [
  ["/etc/shadow", "password hashes"],
  ["/etc/shadow-", "password hashes"],
  ["/etc/gshadow", "group password hashes"],
  ["/etc/gshadow-", "group password hashes"],
  ["/etc/ssh", "SSH host keys"],
  ["/etc/ssl/private", "TLS private keys"],
  ["/etc/NetworkManager/system-connections", "Wi-Fi and VPN secrets"],
];

export interface ProtectedInput {
  home: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  /** Harness config files: every known harness's (the registry's) and the configured agents' `path`s. */
  extra?: readonly string[];
}

export function protectedPaths(input: ProtectedInput): ProtectedPath[] {
  const { home, env } = input;
  const out: ProtectedPath[] = [{ path: input.dataDir, own: true, why: "mcphub's data dir (vault, key file, tokens)" }];
  const passFile = env.MCPHUB_VAULT_PASSPHRASE_FILE;
  if (passFile) out.push({ path: passFile, own: true, why: "mcphub's vault passphrase file" });
  if (env.MCPHUB_CONFIG) out.push({ path: env.MCPHUB_CONFIG, own: false, why: "mcphub's config" });
  for (const [rel, why] of HOME_SECRETS) out.push({ path: join(home, rel), own: false, why });
  for (const p of input.extra ?? []) out.push({ path: p, own: false, why: "a harness's config" });
  for (const [path, why] of SYSTEM_SECRETS) out.push({ path, own: false, why });
  const seen = new Set<string>();
  return out.filter((p) => !seen.has(p.path) && seen.add(p.path));
}
