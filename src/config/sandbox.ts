// The `sandbox:` key (docs/sandbox.md): per stdio server and as a top-level default. This file
// holds its shape and how a server's own setting combines with the default; what the settings
// mean at launch time is src/sandbox/'s business.
import { z } from "zod";

export const SANDBOX_NETWORKS = ["none", "loopback", "full"] as const;
export type SandboxNetwork = (typeof SANDBOX_NETWORKS)[number];

/** The value of a `read:`/`write:` entry that stands for the client's MCP roots. */
export const ROOTS_ENTRY = "roots";

/** Never handed to a server, whatever `sandbox.env` says (they unlock mcphub's own vault). */
const GATEWAY_ONLY_PREFIX = "MCPHUB_VAULT_PASSPHRASE";

// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001f\u007f]/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*\*?$/;

function pathProblem(p: string): string | undefined {
  if (p.trim() === "") return "a path must not be empty";
  if (CONTROL_RE.test(p)) return "a path must not contain control characters";
  if (/^~[^/]/.test(p) && p !== ROOTS_ENTRY) return `"${p}": only ~ and ~/... are expanded (not ~user)`;
  return undefined;
}

const pathEntry = z.string().superRefine((p, ctx) => {
  const problem = pathProblem(p);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

const pathList = (key: "read" | "write") =>
  z
    .array(pathEntry)
    .describe(`a list of paths (absolute, ~/..., relative to the config file's folder, or "${ROOTS_ENTRY}")`)
    .superRefine((list, ctx) => {
      const seen = new Set<string>();
      list.forEach((p, i) => {
        if (seen.has(p)) ctx.addIssue({ code: "custom", path: [i], message: `"${p}" is listed twice in ${key}` });
        seen.add(p);
      });
    });

const envEntry = z.string().superRefine((name, ctx) => {
  if (!ENV_NAME_RE.test(name)) {
    ctx.addIssue({ code: "custom", message: `"${name}" is not a variable name; use letters, digits and _ (a trailing * matches every name with that prefix, e.g. AWS_*)` });
  } else if (name.toUpperCase().startsWith(GATEWAY_ONLY_PREFIX)) {
    // (A broader pattern such as MCPHUB_* is harmless: the passphrase is withheld before it applies.)
    ctx.addIssue({ code: "custom", message: `"${name}" is mcphub's vault passphrase, which never reaches a server` });
  }
});

export const sandboxSettingsSchema = z.strictObject({
  network: z.enum(SANDBOX_NETWORKS, { message: 'network must be "none", "loopback" or "full"' }).optional(),
  read: pathList("read").optional(),
  write: pathList("write").optional(),
  env: z.array(envEntry).describe("a list of environment variable names (NAME or PREFIX_*)").optional(),
});

export type SandboxSettings = z.output<typeof sandboxSettingsSchema>;
/** A server's sandbox after parsing: `false` = off, else the settings (omitted keys = defaults). */
export type SandboxConfig = false | SandboxSettings;

/** `sandbox: off | false | on | true | {network, read, write, env}`. */
export const sandboxSchema = z
  .union([sandboxSettingsSchema, z.boolean(), z.enum(["off", "on"], { message: 'sandbox must be off, on or a map of settings' })])
  .describe("off (or false), on (or true), or a map with network, read, write and env")
  .transform((v): SandboxConfig => (v === false || v === "off" ? false : v === true || v === "on" ? {} : v));

/**
 * A stdio server's effective sandbox: its own setting, else the top-level default. A map given in
 * both places combines key by key (the server's keys replace the default's, lists included); the
 * server's `off` turns the default off for it. Undefined = no sandbox.
 */
export function effectiveSandbox(top: SandboxConfig | undefined, own: SandboxConfig | undefined): SandboxConfig | undefined {
  if (own === undefined) return top === false ? undefined : top;
  if (own === false) return false;
  if (top === undefined || top === false) return own;
  return { ...top, ...own };
}

/** Whether a server with this effective setting runs sandboxed. */
export function isSandboxed(s: SandboxConfig | undefined): s is SandboxSettings {
  return s !== undefined && s !== false;
}
