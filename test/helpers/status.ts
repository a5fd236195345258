// The status page tests' config: two real downstreams (server-everything, server-memory) and the
// gated fixture twice: `notes` fails with a stderr reason until its gate file exists, `broken`
// always fails. Both carry a canary API key that must never reach a page, an answer or a log.
import { join } from "node:path";
import { EVERYTHING, FIXTURES, MEMORY, type TempHome } from "./gateway.js";

export const NOTES_KEY = "canary-notes-key-7f3a9c51";

export function gateFile(home: TempHome): string {
  return join(home.dir, "gate");
}

/** `otlp`: tracing on, exporting to this URL. */
export function statusConfig(home: TempHome, opts: { broken?: boolean; sandboxed?: boolean; otlp?: string } = {}): string {
  return `# status page test config: these comments must survive a disable from the page
servers:
  # the reference server
  everything:
    command: ${process.execPath}
    args: [${EVERYTHING}, stdio]
  memory:
    command: ${process.execPath}   # keep me
    args: [${MEMORY}]
  notes:
    command: ${process.execPath}
    args: [${join(FIXTURES, "gated.mjs")}]
    env:
      GATE_FILE: ${gateFile(home)}
      NOTES_API_KEY: ${NOTES_KEY}
${
  opts.broken
    ? `  broken:
    command: ${process.execPath}
    args: [${join(FIXTURES, "gated.mjs")}]
    env:
      NOTES_API_KEY: ${NOTES_KEY}
`
    : ""
}${
  opts.sandboxed
    ? `  boxed:
    command: ${process.execPath}
    args: [${MEMORY}]
    env:
      MEMORY_FILE_PATH: /tmp/memory.jsonl
    sandbox:
      network: none
`
    : ""
}agents:
  claude:
    type: claude
  codex:
    servers: [memory]
${opts.otlp ? `telemetry:\n  otlp:\n    url: ${opts.otlp}\n` : ""}`;
}
