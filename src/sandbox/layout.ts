// The file system a sandboxed server sees, as an ordered list of mounts: a pure function of the
// settings, the paths involved and what the file system holds (FsProbe), so every rule is
// unit-tested without starting anything. The bubblewrap argv (bwrap.ts) and the macOS profile
// (seatbelt.ts) are both written from it.
//
// What is visible, and how:
//  - the system folders read-only (/usr, /bin, /lib*, /etc, /opt, ...; top-level symlinks kept as
//    symlinks), a fresh /proc (own PID namespace), a minimal /dev, private empty /tmp and /var/tmp;
//  - an empty, private HOME (programs that write ~/.cache keep working; nothing of the real one);
//  - what the runtime needs (runtime.ts) and the server's cwd, read-only;
//  - the listed `read:` paths read-only and `write:` paths writable; `roots` adds the client's
//    roots to the list it is in;
//  - every protected path (protected.ts) that one of those would show is covered by an empty,
//    unreadable mount, unless the operator listed it by name.
// Nothing else of the host: not /home, /root, /run (the D-Bus, Docker and agent sockets), /var,
// /mnt, /media, /srv.
import { posix } from "node:path";
import type { SandboxSettings } from "../config/sandbox.js";
import { ROOTS_ENTRY } from "../config/sandbox.js";
import { OFF_HINT, SandboxError } from "./errors.js";
import type { FsProbe } from "./fs-probe.js";
import { absolute, depth, isInside, tilde } from "./paths.js";
import type { ProtectedPath } from "./protected.js";
import { runtimeNeeds } from "./runtime.js";

/** Top-level folders shown read-only when they exist (the system, never user data). */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/snap", "/gnu"];

export type Mount =
  | { op: "ro" | "rw"; src: string; dest: string; why: string; explicit: boolean }
  | { op: "symlink"; target: string; dest: string; why: string }
  | { op: "tmpfs"; dest: string; why: string }
  /** An empty, unreadable stand-in; `traversable` when a listed path inside it must stay reachable. */
  | { op: "mask"; dest: string; real: string; file: boolean; traversable: boolean; why: string };

export interface Layout {
  mounts: Mount[];
  /** The working directory inside. */
  chdir: string;
  /** Variables the runtime needs inside (npm's cache, offline switches). */
  env: Record<string, string>;
  /** Summaries, `~`-abbreviated: what the server may read, write, and what was hidden. */
  read: string[];
  write: string[];
  runtime: string[];
  hidden: string[];
  notes: string[];
}

export interface LayoutInput {
  settings: SandboxSettings;
  /** The client's roots as local paths, when `roots` is listed; undefined = not asked. */
  roots?: string[] | undefined;
  home: string;
  /** The configured cwd (absolute, `~` expanded), if any. */
  cwd?: string | undefined;
  /** The gateway's own working directory (relative paths in hand-built configs). */
  gatewayCwd: string;
  /** The command as resolved on the gateway's PATH, or as written. */
  command: string;
  args: string[];
  env: Record<string, string>;
  protect: ProtectedPath[];
  fs: FsProbe;
}

interface Exposure {
  src: string;
  dest: string;
  write: boolean;
  explicit: boolean;
  why: string;
}

export function planLayout(input: LayoutInput): Layout {
  const { settings, home, fs } = input;
  const network = settings.network ?? "none";
  const notes: string[] = [];
  const mounts: Mount[] = [];
  const exposures: Exposure[] = [];
  const own = input.protect.filter((p) => p.own);
  const ownOf = (p: string) => own.find((o) => isInside(p, o.path) || isInside(fs.realpath(p), fs.realpath(o.path)));

  // The system.
  for (const dir of SYSTEM_DIRS) {
    const target = fs.link(dir);
    if (target !== undefined) {
      mounts.push({ op: "symlink", target, dest: dir, why: "system" });
      continue;
    }
    if (fs.kind(dir) === "dir") exposures.push({ src: dir, dest: dir, write: false, explicit: false, why: "system" });
  }

  // Listed paths: they must exist, and mcphub's own secrets cannot be listed.
  const listed: { path: string; write: boolean }[] = [];
  const addListed = (p: string, write: boolean) => {
    const i = listed.findIndex((l) => l.path === p);
    if (i >= 0) listed[i] = { path: p, write: write || (listed[i]?.write ?? false) };
    else listed.push({ path: p, write });
  };
  for (const [key, write] of [["read", false], ["write", true]] as const) {
    for (const entry of settings[key] ?? []) {
      if (entry === ROOTS_ENTRY) continue;
      const p = absolute(entry, home, input.gatewayCwd);
      const mine = ownOf(p);
      if (mine) throw new SandboxError(`sandbox.${key} lists ${tilde(p, home)}, which is ${mine.why}`, "a sandboxed server never sees it: remove it from the list");
      if (fs.kind(p) === undefined) throw new SandboxError(`sandbox.${key} lists ${tilde(p, home)}, which does not exist`, `create it or remove it from sandbox.${key}, ${OFF_HINT}`);
      addListed(p, write);
    }
  }
  for (const l of listed) exposures.push({ src: fs.realpath(l.path), dest: l.path, write: l.write, explicit: true, why: l.write ? "write" : "read" });

  // The client's roots: like listed paths, but a root never uncovers a protected path.
  if (input.roots !== undefined) {
    const write = (settings.write ?? []).includes(ROOTS_ENTRY);
    for (const root of input.roots) {
      const p = posix.resolve(root);
      const guarded = input.protect.find((g) => isInside(p, g.path));
      if (guarded) {
        notes.push(`root ${tilde(p, home)} left out: it is ${guarded.why}`);
        continue;
      }
      if (fs.kind(p) === undefined) {
        notes.push(`root ${tilde(p, home)} left out: it does not exist`);
        continue;
      }
      if (!exposures.some((e) => e.explicit && e.dest === p)) exposures.push({ src: fs.realpath(p), dest: p, write, explicit: false, why: write ? "write (root)" : "read (root)" });
    }
  }

  const homeListed = listed.some((l) => isInside(home, l.path));
  const covered = (p: string) => exposures.some((e) => isInside(p, e.dest) || isInside(fs.realpath(p), e.src));

  // What the runtime needs.
  const cwd = input.cwd;
  const runtime = runtimeNeeds({ command: input.command, args: input.args, env: input.env, home, cwd: cwd ?? input.gatewayCwd, online: network === "full", fs });
  const runtimeShown: string[] = [];
  for (const r of runtime.paths) {
    if (covered(r.path) || ownOf(r.path)) continue;
    exposures.push({ src: fs.realpath(r.path), dest: r.path, write: false, explicit: false, why: r.why });
    runtimeShown.push(tilde(r.path, home));
  }

  // The working directory: shown read-only (a server runs from its own folder), but never the
  // whole home directory or the root by implication.
  let chdir = "/tmp";
  if (cwd !== undefined) {
    if (fs.kind(cwd) !== "dir") throw new SandboxError(`the server's cwd ${tilde(cwd, home)} does not exist`, "create it or fix cwd in the config");
    if (!covered(cwd)) {
      if (cwd === "/" || isInside(home, cwd)) {
        throw new SandboxError(
          `the server's cwd ${tilde(cwd, home)} would show ${cwd === "/" ? "the whole file system" : "your whole home directory"}`,
          `set cwd to the folder the server needs, or list ${tilde(cwd, home)} under sandbox.read to show it on purpose`,
        );
      }
      const mine = ownOf(cwd);
      if (mine) throw new SandboxError(`the server's cwd ${tilde(cwd, home)} is inside ${mine.why}`, "run the server from another folder");
      exposures.push({ src: fs.realpath(cwd), dest: cwd, write: false, explicit: false, why: "the server's cwd" });
      runtimeShown.push(`${tilde(cwd, home)} (cwd)`);
    }
    chdir = cwd;
  } else if (covered(input.gatewayCwd) && !ownOf(input.gatewayCwd)) {
    chdir = input.gatewayCwd;
  } else {
    notes.push(`runs in /tmp: mcphub's working directory ${tilde(input.gatewayCwd, home)} is not visible inside (set cwd, or list it)`);
  }

  // DNS with a network: /etc/resolv.conf often links into /run, which is not shown.
  if (network === "full") {
    const resolv = fs.realpath("/etc/resolv.conf");
    if (resolv !== "/etc/resolv.conf" && fs.kind(resolv) === "file" && !covered(resolv)) {
      exposures.push({ src: resolv, dest: resolv, write: false, explicit: false, why: "DNS configuration" });
    }
  }

  // One mount per destination: writable wins over read-only, listed over implied.
  const byDest = new Map<string, Exposure>();
  for (const e of exposures) {
    const prev = byDest.get(e.dest);
    if (!prev) byDest.set(e.dest, e);
    else byDest.set(e.dest, { ...prev, write: prev.write || e.write, explicit: prev.explicit || e.explicit, why: prev.explicit ? prev.why : e.why });
  }
  const shown = [...byDest.values()];
  for (const e of shown) mounts.push({ op: e.write ? "rw" : "ro", src: e.src, dest: e.dest, why: e.why, explicit: e.explicit });

  mounts.push({ op: "tmpfs", dest: "/tmp", why: "private /tmp" });
  mounts.push({ op: "tmpfs", dest: "/var/tmp", why: "private /var/tmp" });
  if (!homeListed && home !== "/") mounts.push({ op: "tmpfs", dest: home, why: "an empty, private home directory" });

  // Protected paths that something shown would reveal get covered, at every place they appear.
  const hidden: string[] = [];
  for (const g of input.protect) {
    if (fs.kind(g.path) === undefined && fs.link(g.path) === undefined) continue;
    const realG = fs.realpath(g.path);
    if (!g.own && listed.some((l) => l.path === g.path || fs.realpath(l.path) === realG)) continue;
    const traversable = listed.some((l) => isInside(l.path, g.path) && l.path !== g.path);
    const file = fs.kind(g.path) !== "dir";
    // Where its real content shows. (A protected path that is itself a symlink shows nothing
    // through the link: the link resolves inside the sandbox, to its target if that is shown.)
    const places = new Set<string>();
    for (const e of shown) {
      if (isInside(realG, e.src)) places.add(posix.join(e.dest, posix.relative(e.src, realG)));
    }
    for (const dest of places) {
      mounts.push({ op: "mask", dest, real: realG, file, traversable, why: g.why });
      hidden.push(tilde(dest, home));
    }
  }

  // Parents before children (a later mount covers what is below it); at equal depth, masks last.
  const rank = (m: Mount) => (m.op === "mask" ? 1 : 0);
  const ordered = mounts.map((m, i) => ({ m, i })).sort((a, b) => depth(a.m.dest) - depth(b.m.dest) || rank(a.m) - rank(b.m) || a.i - b.i);

  return {
    mounts: ordered.map((o) => o.m),
    chdir,
    env: runtime.env,
    read: shown.filter((e) => !e.write && (e.explicit || e.why.startsWith("read"))).map((e) => tilde(e.dest, home)),
    write: shown.filter((e) => e.write).map((e) => tilde(e.dest, home)),
    runtime: runtimeShown,
    hidden,
    notes,
  };
}
