// Every operator command's --help ends with examples. Runs the CLI's main() in-process (help is
// pure output; the other cli-*.test.ts files spawn the real process).
import { expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import type { CliIO } from "../../src/cli/context.js";

const COMMANDS = ["init", "list", "add", "remove", "enable", "disable", "groups", "use", "pin", "unpin", "status", "sync", "offload", "doctor", "agents", "open"];

it.each(COMMANDS)("mcphub %s --help shows examples", async (name) => {
  let out = "";
  const io: CliIO = { out: (t) => void (out += `${t}\n`), err: (t) => void (out += `${t}\n`), color: false };
  const code = await main([name, "--help"], io);
  expect(code).toBe(0);
  expect(out).toContain(`Usage: mcphub ${name}`);
  expect(out).toMatch(new RegExp(`Examples:\\n  mcphub ${name}`));
});
