// Issue 24, item 6 and 8: keeping the daemon running (`mcphub service install|uninstall|status`),
// where a running daemon really listens (the record in the data directory) and who uses it:
// `open`, `status` and `doctor` find a daemon started with `--listen` on another port, and
// `doctor` fails when a harness entry points at a daemon that does not answer.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import YAML from "yaml";
import { startDaemon } from "../helpers/daemon.js";
import { runMcphub, tempHome, type TempHome } from "../helpers/gateway.js";

const systemdAnalyze = spawnSync("systemd-analyze", ["--version"], { encoding: "utf8" });
const HAVE_SYSTEMD_ANALYZE = systemdAnalyze.status === 0;
if (!HAVE_SYSTEMD_ANALYZE) console.warn("skipping the unit verification: systemd-analyze is not installed (Debian package `systemd`)");

const CANARY = "vault-passphrase-canary-7f3a9c";

let home: TempHome;
let cfg: string;
beforeEach(() => {
  home = tempHome("mcphub-service-");
  // The unit goes under $XDG_CONFIG_HOME when set: never the real one.
  delete home.env.XDG_CONFIG_HOME;
  mkdirSync(join(home.dir, "with space"), { recursive: true });
  cfg = home.writeConfig({ servers: {}, agents: { claude: { type: "claude" } } }, "with space/mcphub.yaml");
});
afterEach(() => home.cleanup());

const run = (args: string[], env: NodeJS.ProcessEnv = {}) => runMcphub(home, ["--config", cfg, ...args], { env });

describe.runIf(process.platform === "linux")("mcphub service (systemd user unit)", () => {
  it("install writes a unit that systemd-analyze verifies, with no secret in it; status and uninstall manage it", async () => {
    const unit = join(home.dir, ".config", "systemd", "user", "mcphub.service");
    const r = await run(["service", "install", "--no-start"], { MCPHUB_VAULT_PASSPHRASE: CANARY, MCPHUB_LOG_LEVEL: "info" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Wrote ~/.config/systemd/user/mcphub.service");
    expect(r.stdout).toContain("Not started (--no-start). Start it with: systemctl --user daemon-reload && systemctl --user enable --now mcphub.service");
    expect(r.stderr).toContain("MCPHUB_VAULT_PASSPHRASE is set here but is not written into the unit");
    const text = readFileSync(unit, "utf8");
    expect(text).not.toContain(CANARY);
    expect(text).not.toContain("MCPHUB_VAULT_PASSPHRASE=");
    expect(text).toMatch(/^Restart=on-failure$/m);
    expect(text).toMatch(/^WantedBy=default\.target$/m);
    // The config path has a space: quoted for systemd, and the daemon runs exactly this config.
    expect(text).toContain(`--config "${cfg}" up`);
    expect(text).toContain(`Environment="MCPHUB_DATA_DIR=${home.env.MCPHUB_DATA_DIR}"`);
    expect(text).toContain(`Environment="MCPHUB_LOG_LEVEL=info"`);
    expect(statSync(unit).mode & 0o777).toBe(0o644);

    if (HAVE_SYSTEMD_ANALYZE) {
      // A user manager needs a runtime directory; an empty one is enough for verify.
      const rt = join(home.dir, "runtime");
      mkdirSync(rt, { mode: 0o700 });
      const v = spawnSync("systemd-analyze", ["verify", "--user", unit], { encoding: "utf8", env: { ...home.env, XDG_RUNTIME_DIR: rt } });
      expect(v.status, v.stderr).toBe(0);
      // verify exits 0 even for unknown keys or bad values; it says so on stderr.
      expect(v.stderr.trim()).toBe("");
    }

    const st = JSON.parse((await run(["--json", "service", "status"])).stdout) as { installed: boolean; command: string; file: string };
    expect(st.installed).toBe(true);
    expect(st.file).toBe(unit);
    expect(st.command).toContain(`--config "${cfg}" up`);

    const un = await run(["service", "uninstall"]);
    expect(un.code, un.stderr).toBe(0);
    expect(existsSync(unit)).toBe(false);
    const again = await run(["service", "uninstall"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("no mcphub service named mcphub is installed");
    const bad = await run(["service", "install", "--name", "bad name"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--name "bad name" must be letters');
  });

  it("install refuses an invalid config: a service must not fail on every boot", async () => {
    writeFileSync(cfg, "servers:\n  x: {comand: y}\n");
    const r = await run(["service", "install", "--no-start"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('did you mean "command"?');
    expect(existsSync(join(home.dir, ".config", "systemd", "user", "mcphub.service"))).toBe(false);
  });
});

describe("where the daemon listens", () => {
  it("open, status and doctor use the address the daemon recorded; doctor fails when a harness points at one that does not answer", async () => {
    // The config says 9 (nothing listens there); the daemon is started on a free port instead.
    writeFileSync(cfg, YAML.stringify({ listen: "127.0.0.1:9", servers: {}, agents: { claude: { type: "claude" } } }));
    const sync = await run(["sync", "--write"]);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stderr).toContain("mcphub: note: claude now reaches the gateway at http://127.0.0.1:9/mcp, where no daemon answers yet (ECONNREFUSED): start it with `mcphub up`, or keep it running with `mcphub service install`");
    const before = await run(["doctor"]);
    expect(before.code).toBe(1);
    expect(before.stdout).toMatch(/FAIL {2}daemon +claude points at http:\/\/127\.0\.0\.1:9\/mcp, where no mcphub daemon answers \(ECONNREFUSED\); start it with `mcphub up`, or keep it running with `mcphub service install`/);

    const d = await startDaemon(home, cfg);
    try {
      // Daemon lines carry the time.
      expect(d.stderr()).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z mcphub listening on /m);
      const dir = join(String(home.env.MCPHUB_DATA_DIR), "daemons");
      const files = readdirSync(dir);
      expect(files).toEqual([`${d.child.pid}.json`]);
      expect(statSync(join(dir, files[0] as string)).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(join(dir, files[0] as string), "utf8"))).toMatchObject({ pid: d.child.pid, url: d.url, port: d.port, config: cfg });

      const open = await run(["--json", "open", "--no-browser"]);
      expect(open.code, open.stderr).toBe(0);
      expect((JSON.parse(open.stdout) as { url: string }).url.startsWith(`${d.base}/`)).toBe(true);

      const status = JSON.parse((await run(["--json", "status"])).stdout) as { daemon?: { url: string; pid: number; answers: boolean } };
      expect(status.daemon).toMatchObject({ url: d.url, pid: d.child.pid, answers: true });

      const doctor = await run(["doctor"]);
      expect(doctor.stdout).toContain(`(a daemon for this config runs at ${d.url}, pid ${d.child.pid}: is \`listen:\` what it was started with?)`);
    } finally {
      expect(await d.stop()).toBe(0);
    }
    // A clean exit removes the record; `open` then says nothing answers.
    expect(readdirSync(join(String(home.env.MCPHUB_DATA_DIR), "daemons"))).toEqual([]);
    const gone = await run(["open", "--no-browser"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("no mcphub daemon answers at http://127.0.0.1:9/");
  });

  it("a record left by a process that is gone is stale: dropped, and the configured address is used", async () => {
    const dead = spawnSync(process.execPath, ["-e", "0"]);
    const dir = join(String(home.env.MCPHUB_DATA_DIR), "daemons");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${dead.pid}.json`);
    writeFileSync(file, JSON.stringify({ pid: dead.pid, url: "http://127.0.0.1:1/mcp", host: "127.0.0.1", port: 1, config: cfg, started: new Date().toISOString(), version: "0" }));
    writeFileSync(cfg, YAML.stringify({ listen: "127.0.0.1:9", servers: {} }));
    const open = await run(["open", "--no-browser"]);
    expect(open.stderr).toContain("no mcphub daemon answers at http://127.0.0.1:9/");
    expect(existsSync(file)).toBe(false);
  });
});
