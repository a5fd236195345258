import { editConfig } from "../src/config/index.js";
import { copyFileSync, readFileSync, readdirSync, mkdtempSync } from "node:fs";
import { execSync } from "node:child_process";
const d = mkdtempSync("/tmp/cfged-");
const p = d + "/mcphub.yaml";
copyFileSync("mcphub.example.yaml", p);
const src = readFileSync(p, "utf8");
// add some odd formatting
const odd = src.replace("expose: lazy", "expose:   lazy    # odd spacing").replace("connect_timeout: 30s", "connect_timeout:  30s");
import { writeFileSync } from "node:fs";
writeFileSync(p, odd);
await editConfig(p, (ed) => {
  ed.set(["servers", "remote-everything", "enabled"], true);
  ed.set(["servers", "new-one"], { command: "echo", args: ["hi"] });
  ed.set(["agents", "claude", "pin"], ["memory"]);
  ed.delete(["groups", "demo"]);
});
console.log(execSync(`diff ${d}/mcphub.yaml.bak-* ${p} || true`).toString());
console.log(readdirSync(d));
