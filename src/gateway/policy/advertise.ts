// Which downstream tools are listed directly in tools/list, and in what exact form. The answer is a
// pure function of the in-scope catalogue, the expose mode, the effective pins and the optional
// tool_schema_budget, and its output is canonical: the same inputs in any order give byte-identical
// definitions, so a harness's prompt cache survives restarts and unrelated catalogue changes.
// The eight management tools are not part of this: they are always listed and outside the budget.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Config } from "../../config/schema.js";
import type { NamePlan } from "../../catalog/names.js";
import type { CatalogEntry } from "../../catalog/types.js";
import { byteOrder, canonicalize, canonicalJson } from "../../util/json/canonical.js";
import { estimateTokens } from "../../util/units.js";
import { pinMatches } from "./pins.js";

/** `expose` from config: "all" mounts every in-scope tool, "lazy" only the pinned ones. */
export type ExposeMode = Config["expose"];

export interface AdvertiseInput {
  /** The connected, in-scope catalogue (any order). */
  entries: readonly CatalogEntry[];
  expose: ExposeMode;
  /** Effective pins (see `effectivePins`); ignored when expose is "all". */
  pins: readonly string[];
  /** `tool_schema_budget` in bytes; undefined = no budget. */
  budget?: number;
  /**
   * The name plan of a server, when available: lets an exact pin written in a legacy stutter
   * spelling select only the tool it names (see `namespacedAliases`).
   */
  planOf?: (server: string) => NamePlan | undefined;
  /**
   * Whether a tool's result always reaches the client unchanged (`verbatim`, or no response
   * budget). When it may be replaced by a stored-result receipt, mounted definitions leave out
   * `outputSchema`: a receipt cannot conform to the tool's schema, and clients that validate
   * structured output (the SDK's Client does) would reject it. describe_tool still shows it.
   */
  resultsUnchanged?: boolean;
  /**
   * The unprefixed name an entry is mounted under (its server has `namespace: false` and the name
   * is not refused, see policy/mounts.ts), or undefined for the namespaced `server__tool`.
   */
  bareName?: (entry: CatalogEntry) => string | undefined;
  /**
   * What the gateway accepts for every mounted tool, advertised as its `execution.taskSupport`:
   * "optional" when the session serves MCP tasks (a plain call and a task-augmented one both
   * work, whatever the downstream itself requires). Undefined: the downstream's own is kept.
   */
  taskSupport?: "optional";
}

/** What the budget admitted and left out; reported by list_servers. Field names are a contract. */
export interface BudgetReport {
  budget_bytes: number;
  eligible_tools: number;
  advertised_tools: number;
  omitted_tools: number;
  eligible_definition_bytes: number;
  advertised_definition_bytes: number;
  eligible_estimated_tokens: number;
  advertised_estimated_tokens: number;
  advertised_names?: string[];
  omitted_names?: string[];
}

export interface Advertisement {
  /** Mounted definitions sorted by public name, keys in canonical order. */
  tools: Tool[];
  /** Present exactly when a budget is configured. */
  report?: BudgetReport;
}

/**
 * The downstream tool as the gateway lists it: a full copy of the downstream definition (title,
 * schemas, annotations, icons, _meta kept) renamed to its public name. The description leads with
 * what the tool is for (the operator's tool_use_when hints, then the tool's own description) and
 * ends with `[server]` so a model can tell sources apart: clients that defer tool schemas show a
 * model only names and the start of each description. `keepOutputSchema: false` leaves out the
 * output schema (see `AdvertiseInput.resultsUnchanged`); `taskSupport` replaces the downstream's
 * `execution.taskSupport` with what the gateway accepts (see `AdvertiseInput.taskSupport`).
 */
export function mountedDefinition(entry: CatalogEntry, opts: { keepOutputSchema?: boolean; bareName?: string; taskSupport?: "optional" } = {}): Tool {
  const original = entry.definition.description ?? "";
  const purpose = entry.toolUseWhen.length > 0 ? `Use when: ${entry.toolUseWhen.join("; ")}.` : "";
  const text = [purpose, original].filter((p) => p !== "").join(" ");
  const { outputSchema, ...definition } = entry.definition;
  // An unprefixed mount stands in for the server itself: its definition keeps its own wording.
  const description = opts.bareName !== undefined ? entry.definition.description : text === "" ? `[${entry.server}]` : `${text} [${entry.server}]`;
  return canonicalize({
    ...definition,
    ...(outputSchema !== undefined && opts.keepOutputSchema !== false ? { outputSchema } : {}),
    ...(opts.taskSupport !== undefined ? { execution: { ...definition.execution, taskSupport: opts.taskSupport } } : {}),
    name: opts.bareName ?? entry.namespaced,
    ...(description !== undefined ? { description } : {}),
  });
}

/** Size of a definition as the budget counts it: UTF-8 bytes of its canonical JSON. */
export function definitionBytes(tool: Tool): number {
  return Buffer.byteLength(canonicalJson(tool), "utf8");
}

/**
 * Selects the directly advertised downstream tools.
 * - expose "all": every in-scope entry; pins are ignored.
 * - expose "lazy": the entries some pin matches.
 * - With a budget: in public-name order, admit each complete definition while the running total
 *   stays within the budget; a definition that does not fit is omitted (never truncated) and the
 *   scan continues, so smaller later tools can still fit. Budget 0 admits nothing.
 */
export function selectAdvertised(input: AdvertiseInput): Advertisement {
  const { budget } = input;
  if (budget !== undefined && (!Number.isSafeInteger(budget) || budget < 0)) {
    throw new RangeError(`tool_schema_budget must be a non-negative whole number of bytes, got ${budget}`);
  }
  const eligible = [...input.entries]
    .filter((e) => input.expose === "all" || pinMatches(input.pins, e.server, e.tool, e.wire, input.planOf?.(e.server)))
    .sort((a, b) => byteOrder(a.namespaced, b.namespaced));
  const keepOutputSchema = input.resultsUnchanged ?? true;
  const bare = input.bareName;
  const mounted = dedupeByName(
    eligible
      .map((e) => {
        const bareName = bare?.(e);
        return mountedDefinition(e, { keepOutputSchema, ...(bareName !== undefined ? { bareName } : {}), ...(input.taskSupport ? { taskSupport: input.taskSupport } : {}) });
      })
      .sort((a, b) => byteOrder(a.name, b.name)),
  );
  if (budget === undefined) return { tools: mounted };

  const tools: Tool[] = [];
  const omitted: string[] = [];
  let eligibleBytes = 0;
  let advertisedBytes = 0;
  for (const tool of mounted) {
    const bytes = definitionBytes(tool);
    eligibleBytes += bytes;
    if (advertisedBytes + bytes <= budget) {
      tools.push(tool);
      advertisedBytes += bytes;
    } else {
      omitted.push(tool.name);
    }
  }
  const report: BudgetReport = {
    budget_bytes: budget,
    eligible_tools: mounted.length,
    advertised_tools: tools.length,
    omitted_tools: omitted.length,
    eligible_definition_bytes: eligibleBytes,
    advertised_definition_bytes: advertisedBytes,
    eligible_estimated_tokens: estimateTokens(eligibleBytes),
    advertised_estimated_tokens: estimateTokens(advertisedBytes),
    ...(tools.length ? { advertised_names: tools.map((t) => t.name) } : {}),
    ...(omitted.length ? { omitted_names: omitted } : {}),
  };
  return { tools, report };
}

/**
 * Public names are unique by construction (one plan per server, servers never contain "__");
 * should a caller pass the same entry twice, list it once rather than send a list that clients
 * reject for duplicate names. Input is sorted, so duplicates are adjacent.
 */
function dedupeByName(tools: Tool[]): Tool[] {
  return tools.filter((t, i) => i === 0 || tools[i - 1]?.name !== t.name);
}
