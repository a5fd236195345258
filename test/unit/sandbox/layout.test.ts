// What a sandboxed server sees (src/sandbox/layout.ts), rule by rule, on a file system given as
// data: the system read-only, a private HOME and /tmp, the runtime, the cwd, listed paths and
// roots, and the protected paths covered wherever something shown would reveal them.
import { describe, expect, it } from "vitest";
import { planLayout, type LayoutInput, type Mount } from "../../../src/sandbox/layout.js";
import { protectedPaths } from "../../../src/sandbox/protected.js";
import { SandboxError } from "../../../src/sandbox/errors.js";
import { harnessFiles } from "../../../src/cli/harness-files.js";
import { fakeFs } from "./fake-fs.js";

const HOME = "/home/me";
const DATA = "/home/me/.local/share/mcphub";

const HARNESS = harnessFiles({ HOME });
const FS = fakeFs({
  "/usr/bin/node": "file",
  "/usr/bin/npx": { link: "../lib/node_modules/npm/bin/npx-cli.js" },
  "/usr/lib/node_modules/npm/bin/npx-cli.js": "file",
  "/bin": { link: "usr/bin" },
  "/lib": { link: "usr/lib" },
  "/etc/hosts": "file",
  "/etc/shadow": "file",
  "/opt/tool/bin/tool": "file",
  [`${HOME}/.ssh/id_ed25519`]: "file",
  [`${HOME}/.ssh/known_hosts`]: "file",
  [`${HOME}/.aws/credentials`]: "file",
  [`${HOME}/.claude.json`]: "file",
  [`${HOME}/.npm/_cacache/index`]: "file",
  [`${DATA}/vault/master.key`]: "file",
  [`${HOME}/projects/app/package.json`]: "file",
  [`${HOME}/projects/app/node_modules/x/index.js`]: "file",
  [`${HOME}/projects/app/.ssh`]: { link: `${HOME}/.ssh` },
  [`${HOME}/projects/other/readme.md`]: "file",
  [`${HOME}/.nvm/versions/node/v20/bin/node`]: "file",
  [`${HOME}/srv/server.py`]: "file",
  [`${HOME}/link-to-app`]: { link: `${HOME}/projects/app` },
  "/srv/data/a.txt": "file",
  "/srv/repo/package.json": "file",
  "/srv/repo/node_modules/dep/index.js": "file",
  "/srv/repo/packages/a/package.json": "file",
  "/srv/repo/packages/a/server.js": "file",
  "/srv/tools/node_modules/@scope/srv/package.json": "file",
  "/srv/tools/node_modules/@scope/srv/dist/index.js": "file",
});

function input(over: Partial<LayoutInput> = {}): LayoutInput {
  return {
    settings: {},
    home: HOME,
    gatewayCwd: HOME,
    command: "/usr/bin/node",
    args: [],
    env: {},
    protect: protectedPaths({ home: HOME, dataDir: DATA, env: {}, extra: HARNESS }),
    fs: FS,
    ...over,
  };
}

const dests = (mounts: Mount[], op: Mount["op"]) => mounts.filter((m) => m.op === op).map((m) => m.dest);
function sandboxError(fn: () => unknown): SandboxError {
  try {
    fn();
  } catch (err) {
    if (err instanceof SandboxError) return err;
    throw err;
  }
  throw new Error("expected a SandboxError");
}

describe("the sandbox's file system", () => {
  it("shows the system read-only, keeps top-level symlinks, and gives a private HOME and /tmp", () => {
    const l = planLayout(input());
    expect(dests(l.mounts, "ro")).toEqual(["/usr", "/etc", "/opt"]);
    expect(l.mounts.filter((m) => m.op === "symlink")).toEqual([
      { op: "symlink", target: "usr/bin", dest: "/bin", why: "system" },
      { op: "symlink", target: "usr/lib", dest: "/lib", why: "system" },
    ]);
    expect(dests(l.mounts, "tmpfs")).toEqual(["/tmp", "/var/tmp", HOME]);
    expect(dests(l.mounts, "rw")).toEqual([]);
    // Root-only system secrets an exposed /etc would show a gateway run as root.
    expect(l.mounts.find((m) => m.dest === "/etc/shadow")).toMatchObject({ op: "mask", file: true });
    expect(l.chdir).toBe("/tmp");
  });

  it("lists read and write paths, writable wins, ~ and relative paths are resolved", () => {
    const l = planLayout(input({ settings: { read: ["~/projects/other", "/srv/data"], write: ["~/projects/other"] }, gatewayCwd: "/srv" }));
    expect(l.mounts).toContainEqual({ op: "rw", src: `${HOME}/projects/other`, dest: `${HOME}/projects/other`, why: "write", explicit: true });
    expect(l.mounts).toContainEqual({ op: "ro", src: "/srv/data", dest: "/srv/data", why: "read", explicit: true });
    expect(l.write).toEqual(["~/projects/other"]);
    expect(l.read).toEqual(["/srv/data"]);
    // Parents before children: the private HOME comes before what is shown inside it.
    const order = l.mounts.map((m) => m.dest);
    expect(order.indexOf(HOME)).toBeLessThan(order.indexOf(`${HOME}/projects/other`));
  });

  it("a listed symlink is bound from its target at the path as written", () => {
    const l = planLayout(input({ settings: { read: ["~/link-to-app"] } }));
    expect(l.mounts).toContainEqual({ op: "ro", src: `${HOME}/projects/app`, dest: `${HOME}/link-to-app`, why: "read", explicit: true });
  });

  it("covers protected paths wherever a shown folder would reveal them, through symlinks too", () => {
    const l = planLayout(input({ settings: { read: ["~"] } }));
    // HOME listed: no private HOME over it, and its secrets covered instead.
    expect(dests(l.mounts, "tmpfs")).not.toContain(HOME);
    const masks = l.mounts.filter((m): m is Extract<Mount, { op: "mask" }> => m.op === "mask");
    expect(masks.map((m) => m.dest)).toEqual(expect.arrayContaining([DATA, `${HOME}/.ssh`, `${HOME}/.aws`, `${HOME}/.claude.json`, "/etc/shadow"]));
    expect(masks.find((m) => m.dest === `${HOME}/.claude.json`)?.file).toBe(true);
    expect(masks.find((m) => m.dest === `${HOME}/.ssh`)).toMatchObject({ file: false, traversable: false });
    // Masks come after the mount that would reveal them.
    const order = l.mounts.map((m) => m.dest);
    expect(order.indexOf(HOME)).toBeLessThan(order.indexOf(`${HOME}/.ssh`));
    expect(l.hidden).toEqual(expect.arrayContaining(["~/.ssh", "~/.local/share/mcphub", "~/.claude.json"]));
  });

  it("a protected path listed by name is shown; one listed inside a protected folder stays reachable", () => {
    const byName = planLayout(input({ settings: { read: ["~", "~/.aws"] } }));
    expect(byName.mounts.find((m) => m.op === "mask" && m.dest === `${HOME}/.aws`)).toBeUndefined();
    const inside = planLayout(input({ settings: { read: ["~", "~/.ssh/known_hosts"] } }));
    expect(inside.mounts.find((m) => m.dest === `${HOME}/.ssh`)).toMatchObject({ op: "mask", traversable: true });
    const order = inside.mounts.map((m) => m.dest);
    expect(order.indexOf(`${HOME}/.ssh`)).toBeLessThan(order.indexOf(`${HOME}/.ssh/known_hosts`));
  });

  it("refuses to list mcphub's own data dir or a path that does not exist", () => {
    expect(sandboxError(() => planLayout(input({ settings: { read: ["~/.local/share/mcphub/vault"] } }))).message).toBe(
      "sandbox: sandbox.read lists ~/.local/share/mcphub/vault, which is mcphub's data dir (vault, key file, tokens); a sandboxed server never sees it: remove it from the list",
    );
    expect(sandboxError(() => planLayout(input({ settings: { write: ["/srv/nope"] } }))).message).toBe(
      "sandbox: sandbox.write lists /srv/nope, which does not exist; create it or remove it from sandbox.write, or set sandbox: off for this server (it then runs with your full rights)",
    );
  });

  it("roots join the list they are in, never uncover a protected path, and are skipped when missing", () => {
    const l = planLayout(input({ settings: { write: ["roots"] }, roots: [`${HOME}/projects/app`, `${HOME}/.ssh`, `${HOME}/gone`] }));
    expect(l.mounts).toContainEqual({ op: "rw", src: `${HOME}/projects/app`, dest: `${HOME}/projects/app`, why: "write (root)", explicit: false });
    expect(l.write).toEqual(["~/projects/app"]);
    expect(l.notes).toEqual([
      "root ~/.ssh left out: it is SSH keys",
      "root ~/gone left out: it does not exist",
      "runs in /tmp: mcphub's working directory ~ is not visible inside (set cwd, or list it)",
    ]);
    // The root holds a symlink to ~/.ssh: it reveals nothing (it resolves inside, where ~ is empty).
    expect(l.mounts.find((m) => m.op === "mask" && m.dest === `${HOME}/.ssh`)).toBeUndefined();
  });

  it("shows the cwd read-only and runs there; refuses a cwd that is HOME", () => {
    const l = planLayout(input({ cwd: `${HOME}/projects/app`, command: "/usr/bin/npx", args: ["-y", "pkg"] }));
    expect(l.mounts).toContainEqual({ op: "ro", src: `${HOME}/projects/app`, dest: `${HOME}/projects/app`, why: "the server's cwd", explicit: false });
    expect(l.chdir).toBe(`${HOME}/projects/app`);
    // npx: npm's cache read-only, offline without a network.
    expect(l.mounts).toContainEqual({ op: "ro", src: `${HOME}/.npm`, dest: `${HOME}/.npm`, why: "npm's cache (read-only: packages already installed run offline)", explicit: false });
    expect(l.env).toMatchObject({ npm_config_cache: `${HOME}/.npm`, npm_config_offline: "true", npm_config_update_notifier: "false" });
    expect(planLayout(input({ cwd: `${HOME}/projects/app`, command: "/usr/bin/npx", settings: { network: "full" } })).env.npm_config_offline).toBeUndefined();
    expect(sandboxError(() => planLayout(input({ cwd: HOME }))).message).toBe(
      "sandbox: the server's cwd ~ would show your whole home directory; set cwd to the folder the server needs, or list ~ under sandbox.read to show it on purpose",
    );
    // Listed on purpose, it is fine.
    expect(planLayout(input({ cwd: HOME, settings: { read: ["~"] } })).chdir).toBe(HOME);
  });

  it("a symlink in a shown folder that points at a protected one is covered at the place it shows", () => {
    const l = planLayout(input({ settings: { read: ["/srv/data"] }, protect: [...protectedPaths({ home: HOME, dataDir: DATA, env: {} }), { path: "/srv/data/a.txt", own: false, why: "test" }] }));
    expect(l.mounts.find((m) => m.dest === "/srv/data/a.txt")).toMatchObject({ op: "mask", file: true, real: "/srv/data/a.txt" });
  });

  it("shows what the runtime needs: an installation outside the system, a script and its project", () => {
    const nvm = planLayout(input({ command: `${HOME}/.nvm/versions/node/v20/bin/node`, args: ["--enable-source-maps", `${HOME}/projects/app/node_modules/x/index.js`] }));
    expect(nvm.runtime).toEqual(["~/.nvm/versions/node/v20", "~/projects/app"]);
    const py = planLayout(input({ command: "/usr/bin/python3", args: ["server.py"], cwd: `${HOME}/srv` }));
    // No project file above it: the script's own folder (which is also the cwd here).
    expect(py.runtime).toEqual(["~/srv"]);
    // An installed package finds its dependencies where it is installed; a workspace package at
    // the workspace root, where they are hoisted.
    expect(planLayout(input({ args: ["/srv/tools/node_modules/@scope/srv/dist/index.js"] })).runtime).toEqual(["/srv/tools"]);
    expect(planLayout(input({ args: ["/srv/repo/packages/a/server.js"] })).runtime).toEqual(["/srv/repo"]);
    const opt = planLayout(input({ command: "/opt/tool/bin/tool" }));
    expect(opt.runtime).toEqual([]); // /opt is already shown as part of the system
  });

  it("with network: full, DNS configuration that lives outside /etc is shown", () => {
    const fs = fakeFs({ "/etc/resolv.conf": { link: "/run/systemd/resolve/stub-resolv.conf" }, "/run/systemd/resolve/stub-resolv.conf": "file", "/usr/bin/node": "file" });
    const l = planLayout(input({ fs, settings: { network: "full" } }));
    expect(l.mounts).toContainEqual({ op: "ro", src: "/run/systemd/resolve/stub-resolv.conf", dest: "/run/systemd/resolve/stub-resolv.conf", why: "DNS configuration", explicit: false });
    expect(planLayout(input({ fs })).mounts.some((m) => m.dest.startsWith("/run"))).toBe(false);
  });

  it("protects the harness files the registry knows, mcphub's config, and a passphrase file", () => {
    // The registry's paths come from the CLI (which owns the harness part) as `extra`.
    const list = protectedPaths({ home: HOME, dataDir: DATA, env: { MCPHUB_VAULT_PASSPHRASE_FILE: "/etc/mcphub/pass" }, extra: [...harnessFiles({ HOME }), "/srv/agents/x.json"] });
    const paths = list.map((p) => p.path);
    expect(paths).toEqual(expect.arrayContaining([`${HOME}/.claude.json`, `${HOME}/.cursor/mcp.json`, `${HOME}/.codex/config.toml`, `${HOME}/.config/mcphub`, "/srv/agents/x.json", `${HOME}/.config/gcloud`, `${HOME}/.mozilla`]));
    expect(list.filter((p) => p.own).map((p) => p.path)).toEqual([DATA, "/etc/mcphub/pass"]);
  });
});

describe("protected paths that are symlinks", () => {
  it("are covered where their target shows, not at the link", () => {
    const fs = fakeFs({
      "/usr/bin/node": "file",
      [`${HOME}/.aws`]: { link: "/secure/aws" },
      "/secure/aws/credentials": "file",
    });
    const protect = protectedPaths({ home: HOME, dataDir: DATA, env: {} });
    const onlyHome = planLayout(input({ fs, protect, settings: { read: ["~"] } }));
    // The link shows, its target does not: nothing to cover.
    expect(onlyHome.mounts.some((m) => m.op === "mask" && m.dest.includes("aws"))).toBe(false);
    const both = planLayout(input({ fs, protect, settings: { read: ["~", "/secure"] } }));
    expect(both.mounts.find((m) => m.op === "mask" && m.dest === "/secure/aws")).toMatchObject({ real: "/secure/aws", file: false });
  });
});

describe("a command that is a script", () => {
  // A pipx tool (its shebang names its virtualenv's python, a link to a pyenv build), a uv tool
  // reached through ~/.local/bin, a project's own bin script, and `#!/usr/bin/env node` with
  // node under nvm.
  const fs = fakeFs({
    "/usr/bin/env": "file",
    "/usr/bin/python3": "file",
    [`${HOME}/.local/bin/pipx-tool`]: { link: `${HOME}/.local/pipx/venvs/pipx-tool/bin/pipx-tool` },
    [`${HOME}/.local/pipx/venvs/pipx-tool/bin/pipx-tool`]: { line: `#!${HOME}/.local/pipx/venvs/pipx-tool/bin/python` },
    [`${HOME}/.local/pipx/venvs/pipx-tool/bin/python`]: { link: `${HOME}/.pyenv/versions/3.12.1/bin/python3.12` },
    [`${HOME}/.pyenv/versions/3.12.1/bin/python3.12`]: "file",
    [`${HOME}/code/srv/package.json`]: "file",
    [`${HOME}/code/srv/node_modules/dep/index.js`]: "file",
    [`${HOME}/code/srv/server.js`]: { line: "#!/usr/bin/env -S node --enable-source-maps" },
    [`${HOME}/.nvm/versions/node/v20/bin/node`]: "file",
    [`${HOME}/bin/plain.py`]: { line: "#!/usr/bin/env python3" },
    [`${HOME}/bin/gone`]: { line: "#!/no/such/interpreter" },
  });
  const path = `${HOME}/.nvm/versions/node/v20/bin:/usr/bin`;

  it("shows the interpreter its #! line names, and that one's installation, through links", () => {
    const pipx = planLayout(input({ fs, command: `${HOME}/.local/bin/pipx-tool`, env: { PATH: path } }));
    // ~/.local/bin is not shown as a whole (it is not an installation of its own): the link itself.
    expect(pipx.runtime).toEqual(["~/.local/bin/pipx-tool", "~/.local/pipx/venvs/pipx-tool", "~/.pyenv/versions/3.12.1"]);
  });

  it("finds #!/usr/bin/env NAME on the server's PATH (options skipped) and shows the script's project", () => {
    const node = planLayout(input({ fs, command: `${HOME}/code/srv/server.js`, env: { PATH: path } }));
    expect(node.runtime).toEqual(["~/code/srv", "~/.nvm/versions/node/v20"]);
    // Found in a system folder: nothing more to show.
    expect(planLayout(input({ fs, command: `${HOME}/bin/plain.py`, env: { PATH: "/usr/bin" } })).runtime).toEqual(["~/bin/plain.py"]);
    // An interpreter that is not there adds nothing (the start then fails, saying which command).
    expect(planLayout(input({ fs, command: `${HOME}/bin/gone`, env: { PATH: path } })).runtime).toEqual(["~/bin/gone"]);
  });
});

describe("uvx", () => {
  const fs = fakeFs({
    "/usr/bin/uvx": "file",
    [`${HOME}/.cache/uv/archive-v0/x`]: "file",
    [`${HOME}/.local/share/uv/tools/x`]: "file",
  });

  it("shows uv's cache and data folders read-only, and runs offline without a network", () => {
    const none = planLayout(input({ fs, command: "/usr/bin/uvx", args: ["mcp-server-time"] }));
    expect(none.runtime).toEqual(["~/.cache/uv", "~/.local/share/uv"]);
    expect(none.mounts).toContainEqual(expect.objectContaining({ op: "ro", dest: `${HOME}/.cache/uv` }));
    expect(none.env).toEqual({ UV_CACHE_DIR: `${HOME}/.cache/uv`, UV_OFFLINE: "1" });
    const full = planLayout(input({ fs, command: "/usr/bin/uvx", args: ["mcp-server-time"], settings: { network: "full" } }));
    expect(full.env).toEqual({ UV_CACHE_DIR: `${HOME}/.cache/uv` });
    // UV_CACHE_DIR and XDG_CACHE_HOME move the cache; one that does not exist is not shown.
    const moved = planLayout(input({ fs, command: "/usr/bin/uvx", env: { UV_CACHE_DIR: "/srv/uv-cache" } }));
    expect(moved.runtime).toEqual(["~/.local/share/uv"]);
    expect(moved.env.UV_CACHE_DIR).toBe("/srv/uv-cache");
  });
});
