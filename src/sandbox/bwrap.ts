// A layout (layout.ts) as bubblewrap arguments. Pure: unit-tested argument by argument.
//  - every namespace bwrap offers (user, mount, PID, IPC, UTS, cgroup, and network unless
//    `network: full`); `loopback` and `none` get a network namespace of their own, where bwrap
//    brings up `lo`, so the host's loopback services are out of reach (`none` also loses IP
//    sockets altogether, through the seccomp filter);
//  - no capabilities (as root, bwrap would otherwise keep them), no nested user namespaces
//    (bwrap 0.8+), and the command is killed when the gateway dies (--die-with-parent);
//  - no new session: the server stays in the process group the gateway signals on close, and it
//    has no controlling terminal anyway (it is started detached).
import type { SandboxNetwork } from "../config/sandbox.js";
import type { BwrapInfo } from "./bwrap-support.js";
import type { Layout } from "./layout.js";

export interface BwrapArgsInput {
  layout: Layout;
  network: SandboxNetwork;
  bwrap: Pick<BwrapInfo, "disableUserns" | "tmpfsPerms">;
  /** An empty file nobody may read, bound over protected files. */
  maskFile: string;
  /** The fd the seccomp program is read from, when there is one. */
  seccompFd?: number;
  command: string;
  args: string[];
}

export function bwrapArgs(input: BwrapArgsInput): string[] {
  const { layout } = input;
  const a: string[] = ["--unshare-all", "--unshare-user"];
  if (input.network === "full") a.push("--share-net");
  if (input.bwrap.disableUserns) a.push("--disable-userns");
  a.push("--die-with-parent", "--cap-drop", "ALL");
  a.push("--proc", "/proc", "--dev", "/dev");
  const masks: string[] = [];
  for (const m of layout.mounts) {
    switch (m.op) {
      case "symlink":
        a.push("--symlink", m.target, m.dest);
        break;
      case "ro":
        a.push("--ro-bind", m.src, m.dest);
        break;
      case "rw":
        a.push("--bind", m.src, m.dest);
        break;
      case "tmpfs":
        a.push("--tmpfs", m.dest);
        break;
      case "mask":
        if (m.file) {
          a.push("--ro-bind", input.maskFile, m.dest);
        } else {
          // Mode 0 (0111 when a listed path inside must stay reachable): nothing to list or read.
          if (input.bwrap.tmpfsPerms) a.push("--perms", m.traversable ? "0111" : "0000");
          a.push("--tmpfs", m.dest);
          masks.push(m.dest);
        }
        break;
    }
  }
  // Read-only last, once the listed paths inside them have their mount points.
  for (const d of masks) a.push("--remount-ro", d);
  if (input.seccompFd !== undefined) a.push("--seccomp", String(input.seccompFd));
  a.push("--chdir", layout.chdir, "--", input.command, ...input.args);
  return a;
}
