// An AgentView is the catalogue as one agent sees it: its scope, pins and schema budget applied.
// Every surface (tools/list, every management tool, receipts, detached calls) asks the view, so
// scope is enforced in one place. Derived data is cached per catalogue generation.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Catalog } from "../catalog/catalog.js";
import { catalogRevision } from "../catalog/revision.js";
import { capabilityHints, capabilitySummary, type SummaryServer } from "../catalog/search/summary.js";
import type { CatalogEntry } from "../catalog/types.js";
import { isNamespaced, type Config } from "../config/schema.js";
import { canonicalJson } from "../util/json/canonical.js";
import type { Guard } from "../guard/index.js";
import { managementDefinitions, managementToolFor, type ManagementNaming, type ManagementTool, advertisedName } from "./management.js";
import { type BudgetReport, buildInstructions, effectivePins, type MountPlan, pinMatches, planMounts, Scope, selectAdvertised } from "./policy/index.js";
import { receiptBudget } from "./receipts.js";

export interface Advertisement {
  tools: Tool[];
  /** Canonical JSON of `tools`, to detect a real change before emitting list_changed. */
  fingerprint: string;
  downstreamCount: number;
  report?: BudgetReport;
}

export class AgentView {
  readonly scope: Scope;
  readonly pins: string[];
  readonly budget: number | undefined;
  readonly naming: ManagementNaming;
  readonly instructions: string;
  /**
   * The bounded capability summary of the agent's servers, for the `initialize` instructions:
   * from the config, and from the tools known at start for a server without use_when or a
   * description (fixed for the process, as the instructions are).
   */
  readonly capabilities: string;
  private cache:
    | { generation: number; guard: number; entries: CatalogEntry[]; revision?: string; ad?: Advertisement; mounts?: MountPlan<CatalogEntry>; hints?: { hints: Record<string, string>; more: number } }
    | undefined;

  constructor(
    readonly config: Config,
    private readonly catalog: Catalog,
    /** The agent name, or undefined for an unscoped gateway. */
    readonly agent: string | undefined,
    /** Guardrails: a changed tool is listed as approved, one awaiting approval not at all. */
    readonly guard: Guard,
  ) {
    this.scope = new Scope(config, agent);
    this.pins = effectivePins(config, agent);
    this.budget = agent !== undefined ? config.agents[agent]?.tool_schema_budget : undefined;
    this.naming = config.management_tool_names;
    this.capabilities = this.summary();
    this.instructions = buildInstructions({
      expose: config.expose,
      summary: this.capabilities,
      hasPins: config.expose === "lazy" && this.pins.length > 0,
      ...(this.budget !== undefined ? { budget: this.budget } : {}),
      toolNames: (clean: string) => advertisedName(clean as ManagementTool, this.naming),
    });
  }

  /** The agent's identity as recorded on receipts and in telemetry ("" when unscoped). */
  get owner(): string {
    return this.agent ?? "";
  }

  /** In-scope entries of connected servers, sorted by namespaced name. */
  entries(): CatalogEntry[] {
    return this.fresh().entries;
  }

  allows(entry: CatalogEntry): boolean {
    return this.scope.allowsTool(entry.server, entry.tool, entry.wire, this.catalog.planOf(entry.server));
  }

  /** Scope check by names alone (stored receipts, detached calls), with the live plan if any. */
  allowsName(server: string, fragment: string, wire: string): boolean {
    return this.scope.allowsTool(server, fragment, wire, this.catalog.planOf(server));
  }

  revision(): string {
    const c = this.fresh();
    c.revision ??= catalogRevision(c.entries);
    return c.revision;
  }

  advertisement(): Advertisement {
    const c = this.fresh();
    if (!c.ad) {
      const selected = selectAdvertised({
        entries: c.entries.filter((e) => this.guard.listable(e)).map((e) => this.guard.present(e)),
        expose: this.config.expose,
        pins: this.pins,
        planOf: (server) => this.catalog.planOf(server),
        resultsUnchanged: receiptBudget(this.config) === undefined,
        // Every session serves MCP tasks: any mounted tool may be called as one, or plainly.
        taskSupport: "optional",
        bareName: (e) => {
          const m = this.toolMounts().byPublished.get(e.wire);
          return m !== undefined && m.item.namespaced === e.namespaced ? e.wire : undefined;
        },
        ...(this.budget !== undefined ? { budget: this.budget } : {}),
      });
      // Mounted definitions come back in canonical key order, so the listing is byte-identical
      // across restarts whatever order a downstream serialised its definitions in.
      const tools = [...managementDefinitions(this.naming), ...selected.tools];
      c.ad = {
        tools,
        fingerprint: canonicalJson(tools),
        downstreamCount: selected.tools.length,
        ...(selected.report ? { report: selected.report } : {}),
      };
    }
    return c.ad;
  }

  /**
   * The published name of every in-scope tool: `server__tool`, or for a `namespace: false` server
   * its own name unless that name is refused (see policy/mounts.ts). A bare name that shadows any
   * spelling of a management tool is refused too.
   */
  toolMounts(): MountPlan<CatalogEntry> {
    const c = this.fresh();
    c.mounts ??= planMounts(
      "tool",
      c.entries.map((e) => ({
        server: e.server,
        bare: e.wire,
        qualified: e.namespaced,
        unprefixed: !isNamespaced(this.config.servers[e.server] ?? { enabled: true }),
        item: e,
      })),
      (name) => {
        const m = managementToolFor(name);
        return m !== undefined ? `the gateway's own ${advertisedName(m, this.naming)} tool` : undefined;
      },
    );
    return c.mounts;
  }

  /** Resolves an inbound tool reference (public, wire or stutter spelling) within scope. */
  lookup(server: string, tool: string): { entry?: CatalogEntry; outOfScope: boolean } {
    const entry = this.catalog.lookup(server, tool);
    if (!entry) return { outOfScope: !this.scope.allowsServer(server) };
    return this.allows(entry) ? { entry, outOfScope: false } : { outOfScope: true };
  }

  private fresh() {
    if (!this.cache || this.cache.generation !== this.catalog.generation || this.cache.guard !== this.guard.generation) {
      this.cache = {
        generation: this.catalog.generation,
        guard: this.guard.generation,
        entries: this.catalog.entries().filter((e) => this.allows(e)),
      };
    }
    return this.cache;
  }

  /** Whether one of the agent's pins selects this tool (pins win ties in discovery). */
  isPinned(entry: CatalogEntry): boolean {
    return pinMatches(this.pins, entry.server, entry.tool, entry.wire, this.catalog.planOf(entry.server));
  }

  /**
   * Each in-scope server's one-line capability hint, within `maxBytes` of JSON, with the tools
   * known now (a no-match or weak answer carries them).
   */
  capabilityHints(maxBytes: number): { hints: Record<string, string>; more: number } {
    const c = this.fresh();
    c.hints ??= capabilityHints(this.summaryServers(), maxBytes);
    return c.hints;
  }

  private summaryServers(): SummaryServer[] {
    const allow = this.scope.toolAllowlist;
    const tools = new Map<string, { tool: string; description: string }[]>();
    for (const e of this.entries()) {
      const list = tools.get(e.server);
      if (list) list.push(e);
      else tools.set(e.server, [e]);
    }
    return Object.entries(this.config.servers)
      .filter(([name, s]) => s.enabled && this.scope.allowsServer(name))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, s]) => ({
        name,
        ...(s.description !== undefined ? { description: s.description } : {}),
        ...(s.tags ? { tags: s.tags } : {}),
        ...(s.use_when ? { use_when: s.use_when } : {}),
        ...(allow ? { allowedTools: allow.filter((t) => t.startsWith(`${name}__`)).map((t) => t.slice(name.length + 2)) } : {}),
        ...(tools.has(name) ? { tools: tools.get(name) } : {}),
      }));
  }

  private summary(): string {
    return capabilitySummary(this.summaryServers());
  }
}
