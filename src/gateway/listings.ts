// What a session publishes besides tools: prompts, resources and resource templates of the
// servers in its scope whose listing is known (live, or cached from an earlier session), each under its public name (`server__prompt`,
// `mcphub://server/uri`, or the server's own name for `namespace: false`, see policy/mounts.ts),
// and the inbound direction: a public prompt name, resource URI or template back to the server
// that owns it and the name that server knows it by.
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import type { Prompt, Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { splitNamespaced } from "../catalog/names.js";
import { isNamespaced } from "../config/schema.js";
import type { DownstreamSnapshot } from "../downstream/types.js";
import type { Hub } from "./hub.js";
import { type MountInput, type MountKind, type MountPlan, planMounts } from "./policy/index.js";
import type { AgentView } from "./view.js";

export const HOWTO_URI = "mcphub://howto";
const SCHEME = "mcphub://";

/** A published item traced back to its server. */
export interface Owned {
  server: string;
  /** The prompt name, resource URI or URI template as the server knows it. */
  name: string;
}

export type Resolution = Owned | { error: string };

export interface Published {
  prompts: MountPlan<Prompt>;
  resources: MountPlan<Resource>;
  templates: MountPlan<ResourceTemplate>;
}

/** The current listings of one session (computed on demand: lists are small). */
export function published(hub: Hub, view: AgentView): Published {
  const snaps = listedServers(hub, view);
  const unprefixed = (server: string) => !isNamespaced(hub.config.servers[server] ?? { enabled: true });
  const inputs = <T>(pick: (s: Listed) => T[], bare: (t: T) => string, qualify: (server: string, bare: string) => string): MountInput<T>[] =>
    snaps.flatMap((s) =>
      pick(s).map((item) => {
        const b = bare(item);
        return { server: s.name, bare: b, qualified: qualify(s.name, b), unprefixed: unprefixed(s.name), item };
      }),
    );
  const reservedUri = (name: string) =>
    name === HOWTO_URI ? "the gateway's own mcphub://howto resource" : name.startsWith(SCHEME) ? "the gateway's own mcphub:// URIs" : undefined;
  return {
    prompts: planMounts(
      "prompt",
      inputs((s) => s.prompts, (p) => p.name, (server, name) => `${server}__${name}`),
    ),
    resources: planMounts("resource", inputs((s) => s.resources, (r) => r.uri, qualifyUri), reservedUri),
    templates: planMounts("resource template", inputs((s) => s.resourceTemplates, (t) => t.uriTemplate, qualifyTemplate), reservedUri),
  };
}

type Listed = Pick<DownstreamSnapshot, "name" | "prompts" | "resources" | "resourceTemplates">;

/** In-scope, enabled servers with a listing (live or cached), sorted by name. */
function listedServers(hub: Hub, view: AgentView): Listed[] {
  const out: Listed[] = [];
  for (const name of Object.keys(hub.config.servers).sort()) {
    if (!hub.config.servers[name]?.enabled || !view.scope.allowsServer(name)) continue;
    const l = hub.catalog.listingOf(name);
    if (l) out.push({ name, prompts: l.prompts, resources: l.resources, resourceTemplates: l.resourceTemplates ?? [] });
  }
  return out;
}

export function listPrompts(p: Published): Prompt[] {
  return p.prompts.items.map((m) => ({ ...m.item, name: m.published, ...describe(m.item.description ?? m.item.name, m.server, m.published === m.bare) }));
}

export function listResources(p: Published): Resource[] {
  const howto: Resource = { uri: HOWTO_URI, name: "mcphub-howto", title: "How to use this gateway", mimeType: "text/markdown" };
  return [howto, ...p.resources.items.map((m) => ({ ...m.item, uri: m.published, ...describe(m.item.description ?? m.item.name, m.server, m.published === m.bare) }))];
}

export function listResourceTemplates(p: Published): ResourceTemplate[] {
  return p.templates.items.map((m) => ({ ...m.item, uriTemplate: m.published, ...describe(m.item.description ?? m.item.name, m.server, m.published === m.bare) }));
}

/** Every refused unprefixed name of this session's listings, for list_servers and logs. */
export function conflictsOf(p: Published): { kind: MountKind; name: string; servers: string[]; message: string }[] {
  return [...p.prompts.conflicts.values(), ...p.resources.conflicts.values(), ...p.templates.conflicts.values()];
}

/** A prompt's public name → its server and own name. */
export function resolvePrompt(hub: Hub, view: AgentView, p: Published, name: string): Resolution {
  const split = splitNamespaced(name);
  return (
    lookup(p.prompts, name) ??
    inScope(hub, view, split ? { server: split.server, name: split.tool } : undefined) ?? { error: `unknown prompt "${name}"; list prompts to see what is available` }
  );
}

/**
 * A resource URI → its server and own URI: a listed URI; the namespaced `mcphub://server/uri`
 * form; a URI matching exactly one unprefixed server's template; or, with exactly one unprefixed
 * server in scope, that server (its URIs need not be listed).
 */
export function resolveResource(hub: Hub, view: AgentView, p: Published, uri: string): Resolution {
  const known = lookup(p.resources, uri) ?? inScope(hub, view, parseQualifiedUri(uri));
  if (known) return known;
  if (!uri.startsWith(SCHEME)) {
    const owners = new Set<string>();
    for (const m of p.templates.items) {
      if (m.published === m.bare && matches(m.bare, uri)) owners.add(m.server);
    }
    if (owners.size === 1) return { server: [...owners][0] as string, name: uri };
    if (owners.size > 1) {
      return { error: `resource "${uri}" matches templates of servers ${[...owners].sort().map((s) => `"${s}"`).join(" and ")} (all namespace: false); read it as mcphub://SERVER/${encodeURIComponent(uri)}` };
    }
    const unprefixed = Object.entries(hub.config.servers)
      .filter(([name, cfg]) => cfg.enabled && !isNamespaced(cfg) && view.scope.allowsServer(name))
      .map(([name]) => name);
    if (unprefixed.length === 1) return { server: unprefixed[0] as string, name: uri };
  }
  return { error: `unknown resource ${uri}; list resources to see what is available` };
}

/** A completion's `ref/resource` URI (a published template, or a resource URI) → owner. */
export function resolveTemplate(hub: Hub, view: AgentView, p: Published, uri: string): Resolution {
  return lookup(p.templates, uri) ?? inScope(hub, view, parseQualifiedUri(uri)) ?? resolveResource(hub, view, p, uri);
}

/** A published name of the plan, or its refusal; undefined when the plan does not know it. */
function lookup<T>(plan: MountPlan<T>, name: string): Resolution | undefined {
  const hit = plan.byPublished.get(name);
  if (hit) return { server: hit.server, name: hit.bare };
  const conflict = plan.conflicts.get(name);
  return conflict ? { error: conflict.message } : undefined;
}

/** A qualified reference, when it names a configured server in the session's scope. */
function inScope(hub: Hub, view: AgentView, ref: Owned | undefined): Owned | undefined {
  return ref && hub.config.servers[ref.server] !== undefined && view.scope.allowsServer(ref.server) ? ref : undefined;
}

function describe(text: string, server: string, bare: boolean): { description: string } {
  // An unprefixed item stands in for the server itself and keeps its own wording.
  return { description: bare ? text : `[${server}] ${text}` };
}

function qualifyUri(server: string, uri: string): string {
  return `${SCHEME}${encodeURIComponent(server)}/${encodeURIComponent(uri)}`;
}

/**
 * `mcphub://server/` + the template with its literal parts percent-encoded and its `{...}`
 * expressions kept, so a client expanding it produces exactly the qualified form of the URI the
 * server's own template would have produced (simple `{var}` expansion percent-encodes values).
 */
function qualifyTemplate(server: string, template: string): string {
  const parts = template.split(/(\{[^}]*\})/);
  return `${SCHEME}${encodeURIComponent(server)}/${parts.map((part) => (part.startsWith("{") ? part : encodeURIComponent(part))).join("")}`;
}

/** `mcphub://server/<encoded uri>` → server and decoded URI. */
export function parseQualifiedUri(uri: string): Owned | undefined {
  const m = /^mcphub:\/\/([^/]+)\/(.+)$/.exec(uri);
  if (!m || m[1] === undefined || m[2] === undefined) return undefined;
  try {
    return { server: decodeURIComponent(m[1]), name: decodeURIComponent(m[2]) };
  } catch {
    return undefined;
  }
}

function matches(template: string, uri: string): boolean {
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false;
  }
}
