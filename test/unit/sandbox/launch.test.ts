// The launchers written from a layout: bubblewrap's arguments, the seccomp program, the macOS
// profile, the environment allow-list, and how bwrap's complaints become a cause and a fix.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { prepareSandbox } from "../../../src/sandbox/index.js";
import { bwrapArgs } from "../../../src/sandbox/bwrap.js";
import { explainBwrapFailure } from "../../../src/sandbox/bwrap-support.js";
import { sandboxEnv } from "../../../src/sandbox/env.js";
import { planLayout, type Layout } from "../../../src/sandbox/layout.js";
import { protectedPaths } from "../../../src/sandbox/protected.js";
import { sbString, seatbeltProfile } from "../../../src/sandbox/seatbelt.js";
import { seccompProgram } from "../../../src/sandbox/seccomp.js";
import { harnessFiles } from "../../../src/cli/harness-files.js";
import { fakeFs } from "./fake-fs.js";

const HOME = "/home/me";
const FS = fakeFs({
  "/usr/bin/node": "file",
  "/etc/hosts": "file",
  [`${HOME}/.ssh/id`]: "file",
  [`${HOME}/.ssh/known_hosts`]: "file",
  [`${HOME}/.claude.json`]: "file",
  [`${HOME}/work/a.txt`]: "file",
  [`${HOME}/out/x`]: "file",
});

function layout(settings: Parameters<typeof planLayout>[0]["settings"]): Layout {
  return planLayout({
    settings,
    home: HOME,
    gatewayCwd: "/",
    cwd: `${HOME}/work`,
    command: "/usr/bin/node",
    args: ["server.js"],
    env: {},
    protect: protectedPaths({ home: HOME, dataDir: `${HOME}/.local/share/mcphub`, env: {}, extra: harnessFiles({ HOME }) }),
    fs: FS,
  });
}

const features = { disableUserns: true, tmpfsPerms: true };

describe("bubblewrap arguments", () => {
  it("every namespace, no capabilities, mounts in order, the seccomp fd, then the command", () => {
    const l = layout({ network: "none", write: ["~/out"] });
    const args = bwrapArgs({ layout: l, network: "none", bwrap: features, maskFile: "/tmp/m/unreadable", seccompFd: 3, command: "/usr/bin/node", args: ["server.js"] });
    expect(args.slice(0, 8)).toEqual(["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--cap-drop", "ALL", "--proc", "/proc"]);
    expect(args).not.toContain("--share-net");
    expect(args.join(" ")).toContain(`--ro-bind /usr /usr`);
    expect(args.join(" ")).toContain(`--tmpfs /tmp`);
    expect(args.join(" ")).toContain(`--tmpfs ${HOME} `);
    expect(args.join(" ")).toContain(`--bind ${HOME}/out ${HOME}/out`);
    expect(args.join(" ")).toContain(`--ro-bind ${HOME}/work ${HOME}/work`);
    expect(args.indexOf(`--tmpfs`)).toBeLessThan(args.indexOf(`${HOME}/out`));
    expect(args.slice(-7)).toEqual(["--seccomp", "3", "--chdir", `${HOME}/work`, "--", "/usr/bin/node", "server.js"]);
  });

  it("full shares the host network; old bwrap gets no --disable-userns and plain masks", () => {
    const l = layout({ network: "full", read: ["~"] });
    const args = bwrapArgs({ layout: l, network: "full", bwrap: { disableUserns: false, tmpfsPerms: false }, maskFile: "/m", command: "node", args: [] });
    expect(args.slice(0, 3)).toEqual(["--unshare-all", "--unshare-user", "--share-net"]);
    expect(args).not.toContain("--disable-userns");
    expect(args).not.toContain("--perms");
    const withPerms = bwrapArgs({ layout: l, network: "full", bwrap: features, maskFile: "/m", command: "node", args: [] }).join(" ");
    // A protected folder: an unreadable empty tmpfs, made read-only after everything inside it.
    expect(withPerms).toContain(`--perms 0000 --tmpfs ${HOME}/.ssh`);
    expect(withPerms).toContain(`--remount-ro ${HOME}/.ssh`);
    expect(withPerms.indexOf(`--remount-ro ${HOME}/.ssh`)).toBeGreaterThan(withPerms.indexOf(`--ro-bind ${HOME} ${HOME}`));
    // A protected file: the unreadable file bound over it.
    expect(withPerms).toContain(`--ro-bind /m ${HOME}/.claude.json`);
  });

  it("a listed path inside a protected folder keeps it traversable", () => {
    const l = layout({ read: ["~", "~/.ssh/known_hosts"] });
    const args = bwrapArgs({ layout: l, network: "none", bwrap: features, maskFile: "/m", command: "node", args: [] }).join(" ");
    expect(args).toContain(`--perms 0111 --tmpfs ${HOME}/.ssh`);
    expect(args.indexOf(`--ro-bind ${HOME}/.ssh/known_hosts`)).toBeGreaterThan(args.indexOf(`--tmpfs ${HOME}/.ssh`));
  });
});

describe("the seccomp program", () => {
  const insns = (buf: Buffer) => Array.from({ length: buf.length / 8 }, (_, i) => ({ code: buf.readUInt16LE(i * 8), jt: buf[i * 8 + 2], jf: buf[i * 8 + 3], k: buf.readUInt32LE(i * 8 + 4) }));

  it("checks the ABI, refuses the keyring and io_uring, and IP sockets only for network: none", () => {
    const none = insns(seccompProgram({ denyIp: true, arch: "x64" }) as Buffer);
    const loop = insns(seccompProgram({ denyIp: false, arch: "x64" }) as Buffer);
    expect(none[0]).toEqual({ code: 0x20, jt: 0, jf: 0, k: 4 }); // load arch
    expect(none[1]?.k).toBe(0xc000003e); // AUDIT_ARCH_X86_64
    const ks = (p: typeof none) => p.filter((i) => i.code === 0x15).map((i) => i.k);
    for (const nr of [248, 249, 250, 425, 426, 427]) expect(ks(loop)).toContain(nr);
    expect(ks(loop)).not.toContain(41);
    expect(ks(none)).toEqual(expect.arrayContaining([41, 2, 10])); // socket(AF_INET | AF_INET6)
    expect(none.filter((i) => i.code === 0x06).map((i) => i.k)).toEqual(expect.arrayContaining([0x7fff0000, 0x0005000d, 0x00050001, 0x00050026]));
    // Every jump lands inside the program.
    none.forEach((i, n) => {
      if (i.code === 0x15 || i.code === 0x35) expect(n + 1 + Math.max(i.jt ?? 0, i.jf ?? 0)).toBeLessThan(none.length);
    });
    expect(insns(seccompProgram({ denyIp: true, arch: "arm64" }) as Buffer)[1]?.k).toBe(0xc00000b7);
    expect(seccompProgram({ denyIp: true, arch: "ia32" })).toBeUndefined();
  });
});

describe("the macOS profile (sandbox-exec; untested on a Mac here)", () => {
  it("denies by default, allows the system, listed paths and TMPDIR, then denies protected paths", () => {
    const p = seatbeltProfile({ layout: layout({ network: "none", read: ["~"], write: ["~/out"] }), network: "none", tmpdir: "/private/var/folders/x/T/mcphub-a" });
    const lines = p.split("\n");
    expect(lines[0]).toBe("(version 1)");
    expect(lines[1]).toBe("(deny default)");
    expect(p).toContain('(allow file-read* (subpath "/usr") (subpath "/bin")');
    expect(p).toContain(`(subpath "${HOME}")`);
    expect(p).toContain(`(allow file-read* file-write* (subpath "${HOME}/out") (subpath "/private/var/folders/x/T/mcphub-a"))`);
    const deny = lines.findIndex((l) => l.startsWith("(deny file-read* file-write*"));
    expect(deny).toBeGreaterThan(lines.findIndex((l) => l.includes(`(subpath "${HOME}")`)));
    expect(lines[deny]).toContain(`(subpath "${HOME}/.ssh")`);
    expect(lines[deny]).toContain(`(literal "${HOME}/.claude.json")`);
    expect(p).not.toContain("(allow network*)");
    expect(p).toContain("; network: none");
  });

  it("loopback allows localhost only (the host's, on macOS); full allows the network and DNS", () => {
    const loop = seatbeltProfile({ layout: layout({ network: "loopback" }), network: "loopback", tmpdir: "/t" });
    expect(loop).toContain('(allow network-outbound (remote ip "localhost:*"))');
    const full = seatbeltProfile({ layout: layout({ network: "full" }), network: "full", tmpdir: "/t" });
    expect(full).toContain("(allow network*)");
    expect(full).toContain('(global-name "com.apple.dnssd.service")');
  });

  it("listed paths inside protected ones are allowed again after the denial; strings are quoted", () => {
    const p = seatbeltProfile({ layout: layout({ read: ["~", "~/.ssh/known_hosts"] }), network: "none", tmpdir: "/t" });
    const lines = p.split("\n");
    const deny = lines.findIndex((l) => l.startsWith("(deny file-read*"));
    expect(lines.findIndex((l) => l === `(allow file-read* (subpath "${HOME}/.ssh/known_hosts"))`)).toBeGreaterThan(deny);
    expect(sbString('a"b\\c')).toBe('"a\\"b\\\\c"');
  });
});

describe("the environment inside", () => {
  const env = { PATH: "/usr/bin", HOME, LANG: "C.UTF-8", LC_ALL: "C", AWS_SECRET_ACCESS_KEY: "s", GITHUB_TOKEN: "t", HTTPS_PROXY: "http://p", MY_KEY: "k", TEAM_A: "a", TEAM_B: "b" };

  it("keeps the base, the server's own variables and the allowed names; proxies only with a network", () => {
    expect(sandboxEnv({ env, own: ["MY_KEY"], allow: ["TEAM_*"], network: "none", set: { TMPDIR: "/tmp" } })).toEqual({
      PATH: "/usr/bin",
      HOME,
      LANG: "C.UTF-8",
      LC_ALL: "C",
      MY_KEY: "k",
      TEAM_A: "a",
      TEAM_B: "b",
      TMPDIR: "/tmp",
    });
    expect(sandboxEnv({ env, own: [], allow: ["GITHUB_TOKEN"], network: "full", set: {} })).toMatchObject({ HTTPS_PROXY: "http://p", GITHUB_TOKEN: "t" });
    expect(sandboxEnv({ env, own: [], allow: [], network: "full", set: {} }).AWS_SECRET_ACCESS_KEY).toBeUndefined();
  });
});

describe("why bubblewrap failed", () => {
  const said = "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces. See <https://deb.li/bubblewrap> or <file:///usr/share/doc/bubblewrap/README.Debian.gz>.";

  it("names the switch that disables user namespaces, and its fix", () => {
    expect(explainBwrapFailure(said, { unprivilegedUsernsClone: 0, container: false }).message).toMatch(
      /^sandbox: unprivileged user namespaces are disabled \(kernel\.unprivileged_userns_clone = 0; bwrap said: No permissions.*\); enable them with `sudo sysctl -w kernel\.unprivileged_userns_clone=1`/,
    );
    expect(explainBwrapFailure("bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)", { maxUserNamespaces: 0, container: false }).message).toContain(
      "sudo sysctl -w user.max_user_namespaces=15000",
    );
    expect(explainBwrapFailure("bwrap: setting up uid map: Permission denied", { apparmorRestrict: 1, container: false }).message).toContain("AppArmor restricts unprivileged user namespaces");
    expect(explainBwrapFailure(said, { container: true }).message).toContain("--security-opt seccomp=unconfined");
  });

  it("other failures: /proc, the loopback, a missing path, a command not found inside", () => {
    const sw = { container: false };
    expect(explainBwrapFailure("bwrap: Can't mount proc on /newroot/proc: Operation not permitted", sw).reason).toContain("/proc cannot be mounted");
    expect(explainBwrapFailure("bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted", sw).fix).toContain("network: full");
    expect(explainBwrapFailure("bwrap: Can't find source path /srv/x: No such file or directory", sw).reason).toBe("/srv/x does not exist");
    expect(explainBwrapFailure("bwrap: execvp mytool: No such file or directory", sw).message).toContain("the command mytool could not be run inside the sandbox");
    // Every fix leaves the last word to the operator.
    expect(explainBwrapFailure("bwrap: something new", sw).message).toMatch(/or set sandbox: off for this server/);
  });
});

describe("platforms without a sandbox", () => {
  it("Windows (and macOS without sandbox-exec) refuse to start the server, saying so", async () => {
    const req = { server: "s", settings: {}, command: "node", args: [], env: {}, ownEnv: [] };
    await expect(prepareSandbox({ ...req, platform: "win32" })).rejects.toThrow(
      "sandbox: sandboxes are not available on Windows; set sandbox: off for this server (it then runs with your full rights)",
    );
    if (!existsSync("/usr/bin/sandbox-exec")) {
      await expect(prepareSandbox({ ...req, platform: "darwin" })).rejects.toThrow("sandbox: /usr/bin/sandbox-exec is missing; it ships with macOS");
    }
  });
});
