// Names that a JavaScript object cannot hold as ordinary keys. Every map in the config (servers,
// groups, agents, env, headers, tool_use_when) is user-named, and a plain object silently loses a
// key named `__proto__` (assigning it sets the prototype instead). So such a key is refused with a
// message before validation, and the validated maps are given no prototype at all, so names such
// as `constructor` or `toString` are served like any other and an unknown name looks up nothing.
import type { Config } from "./schema.js";
import type { ConfigIssue } from "./errors.js";
import { formatPath } from "./errors.js";

const RESERVED = "__proto__";
/** Deeper than any real config; bounds the walk on hostile input. */
const MAX_DEPTH = 16;

/** An issue for every `__proto__` key anywhere in the parsed file. */
export function reservedKeyIssues(raw: unknown): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const walk = (value: unknown, path: (string | number)[]) => {
    if (path.length > MAX_DEPTH || value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, [...path, i]));
      return;
    }
    for (const key of Object.keys(value)) {
      const child = (value as Record<string, unknown>)[key];
      if (key === RESERVED) {
        out.push({ path: formatPath([...path, key]), message: `"${RESERVED}" cannot be used as a name (JavaScript reserves it); pick another name` });
        continue;
      }
      walk(child, [...path, key]);
    }
  };
  walk(raw, []);
  return out;
}

/** The same map without a prototype: only its own names can be looked up. */
export function bareRecord<T>(rec: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, rec);
}

/** Gives every user-named map of a validated config no prototype (see the file comment). */
export function bareMaps(config: Config): Config {
  const servers = bareRecord(config.servers);
  for (const [name, s] of Object.entries(servers)) {
    servers[name] = {
      ...s,
      ...(s.env ? { env: bareRecord(s.env) } : {}),
      ...(s.headers ? { headers: bareRecord(s.headers) } : {}),
      ...(s.tool_use_when ? { tool_use_when: bareRecord(s.tool_use_when) } : {}),
      ...(s.effects ? { effects: bareRecord(s.effects) } : {}),
    };
  }
  return {
    ...config,
    servers,
    groups: bareRecord(config.groups),
    agents: bareRecord(config.agents),
    ...(config.effects ? { effects: bareRecord(config.effects) } : {}),
  };
}
