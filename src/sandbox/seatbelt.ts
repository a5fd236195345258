// macOS: the same layout (layout.ts) as a Seatbelt profile for `sandbox-exec -p PROFILE`.
// UNTESTED on a Mac here (this project's machines are Linux); the generated text is unit-tested.
// Same meaning, with the differences macOS imposes (docs/sandbox.md):
//  - there are no mount namespaces: instead of an empty private HOME and /tmp, everything not
//    allowed is refused, and the server gets a private TMPDIR (created per start, removed after);
//  - there are no network namespaces: `loopback` allows the host's own loopback (127.0.0.1, ::1),
//    which is wider than on Linux, where it is the sandbox's own; `none` refuses all IP traffic.
// Seatbelt gives the last matching rule precedence, so the profile goes from broad to narrow:
// system reads, listed reads, writes, then the protected paths, then listed paths inside them.
import type { SandboxNetwork } from "../config/sandbox.js";
import type { Layout } from "./layout.js";
import { isInside } from "./paths.js";

/** The parts of the system a process needs to run on macOS, read-only. */
const MACOS_SYSTEM = ["/usr", "/bin", "/sbin", "/System", "/Library", "/private/etc", "/private/var/db/timezone", "/private/var/select", "/opt/homebrew", "/opt/local", "/nix"];

/** Directory services, logging and notifications every process uses; DNS and TLS trust with a network. */
const MACH_BASE = ["com.apple.system.opendirectoryd.libinfo", "com.apple.system.logger", "com.apple.system.notification_center", "com.apple.logd", "com.apple.CoreServices.coreservicesd"];
const MACH_NETWORK = ["com.apple.dnssd.service", "com.apple.SystemConfiguration.configd", "com.apple.SystemConfiguration.DNSConfiguration", "com.apple.trustd", "com.apple.trustd.agent"];

export interface SeatbeltInput {
  layout: Layout;
  network: SandboxNetwork;
  /** The server's private TMPDIR (already created). */
  tmpdir: string;
}

/** A string literal in the profile language. */
export function sbString(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

const subpath = (p: string) => `(subpath ${sbString(p)})`;
const literal = (p: string) => `(literal ${sbString(p)})`;

export function seatbeltProfile(input: SeatbeltInput): string {
  const { layout } = input;
  const lines: string[] = [
    "(version 1)",
    "(deny default)",
    "(allow process-exec process-fork)",
    "(allow signal (target same-sandbox))",
    "(allow process-info* (target same-sandbox))",
    "(allow sysctl-read)",
    // Looking paths up (stat) is allowed everywhere; reading contents is not.
    "(allow file-read-metadata)",
    `(allow file-read* file-write-data file-ioctl ${["/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper"].map(literal).join(" ")})`,
    `(allow file-read* ${["/dev/random", "/dev/urandom"].map(literal).join(" ")})`,
    "(allow ipc-posix-shm-read-data ipc-posix-shm-read-metadata)",
    `(allow mach-lookup ${MACH_BASE.map((n) => `(global-name ${sbString(n)})`).join(" ")})`,
    "; the system, read-only",
    `(allow file-read* ${MACOS_SYSTEM.map(subpath).join(" ")})`,
  ];
  const binds = layout.mounts.filter((m): m is Extract<typeof m, { op: "ro" | "rw" }> => m.op === "ro" || m.op === "rw");
  // Linux system folders are covered by MACOS_SYSTEM above; the rest is what the layout shows.
  const own = binds.filter((m) => m.why !== "system");
  const reads = own.filter((m) => m.op === "ro");
  const writes = own.filter((m) => m.op === "rw");
  if (reads.length) lines.push("; runtime, cwd and sandbox.read, read-only", `(allow file-read* ${reads.map((m) => subpath(m.src)).join(" ")})`);
  lines.push("; sandbox.write and the private TMPDIR", `(allow file-read* file-write* ${[...writes.map((m) => m.src), input.tmpdir].map(subpath).join(" ")})`);
  const masks = layout.mounts.filter((m): m is Extract<typeof m, { op: "mask" }> => m.op === "mask");
  if (masks.length) {
    lines.push("; protected paths", `(deny file-read* file-write* ${[...new Set(masks.map((m) => (m.file ? literal(m.real) : subpath(m.real))))].join(" ")})`);
    const inside = own.filter((m) => m.explicit && masks.some((k) => isInside(m.src, k.real) && m.src !== k.real));
    for (const m of inside) lines.push(`(allow file-read*${m.op === "rw" ? " file-write*" : ""} ${subpath(m.src)})`);
  }
  switch (input.network) {
    case "none":
      lines.push("; network: none (denied by default)");
      break;
    case "loopback":
      lines.push(
        "; network: loopback (on macOS: the host's own loopback)",
        '(allow network-outbound (remote ip "localhost:*"))',
        '(allow network-inbound network-bind (local ip "localhost:*"))',
      );
      break;
    case "full":
      lines.push("; network: full", "(allow network*)", `(allow mach-lookup ${MACH_NETWORK.map((n) => `(global-name ${sbString(n)})`).join(" ")})`);
      break;
  }
  // Unix sockets inside the private TMPDIR (a server's own helpers), whatever the network.
  lines.push(`(allow network* (local unix-socket ${subpath(input.tmpdir)}) (remote unix-socket ${subpath(input.tmpdir)}))`);
  return `${lines.join("\n")}\n`;
}

export const SANDBOX_EXEC = "/usr/bin/sandbox-exec";

/** `sandbox-exec -p PROFILE COMMAND ARGS...` */
export function seatbeltArgs(profile: string, command: string, args: string[]): { file: string; args: string[] } {
  return { file: SANDBOX_EXEC, args: ["-p", profile, command, ...args] };
}
