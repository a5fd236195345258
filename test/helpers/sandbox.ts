// Shared by the sandbox tests: whether bubblewrap can start here (the tests skip, saying why,
// only where it cannot), and the probe fixture's answers.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { bubblewrap } from "../../src/sandbox/index.js";
import { text } from "./gateway.js";

/** Undefined when a real sandbox starts here, else the reason it cannot (printed once). */
export async function sandboxUnavailable(): Promise<string | undefined> {
  if (process.platform !== "linux") return `sandbox tests need Linux with bubblewrap (this is ${process.platform})`;
  try {
    await bubblewrap(process.env);
    return undefined;
  } catch (err) {
    const why = `sandbox tests skipped: ${(err as Error).message}`;
    console.warn(why);
    return why;
  }
}

/** The probe fixture's {ok, detail} answer. */
export function attempt(r: CallToolResult): { ok: boolean; detail: string } {
  return JSON.parse(text(r)) as { ok: boolean; detail: string };
}

/**
 * The probe's answer while its server may be restarting for a config edit: a call that was in
 * flight when the old process was retired fails by design ("…was interrupted because its
 * configuration changed and it was restarted", docs/downstream.md), and counts as not yet.
 * Any other error still fails the test.
 */
export function attemptAcrossRestart(r: CallToolResult): { ok: boolean; detail: string } {
  if (r.isError && /because its configuration changed and it was restarted/.test(text(r))) return { ok: false, detail: "restarting" };
  return attempt(r);
}
