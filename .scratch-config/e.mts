import { loadConfig } from "../src/config/index.js";
const l = await loadConfig({ configPath: "mcphub.example.yaml", env: {}, cwd: process.cwd(), home: "/tmp/nohome" });
console.log(JSON.stringify(l.config, null, 1).slice(0, 3000));
