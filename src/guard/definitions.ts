// Pinned tool definitions: the part of a tool definition a "rug pull" changes — the name, the
// description (where smuggled instructions go), the input and output schemas and the annotations
// (a tool that starts calling itself read-only) — its hash in canonical JSON, and a summary of
// what changed between two versions. Titles, icons and _meta are display data and not pinned.
import { createHash } from "node:crypto";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { canonicalJson } from "../util/json/canonical.js";
import { clipUtf8, collapseWhitespace } from "../util/text.js";

export interface PinnedDefinition {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

export function pinnedDefinition(tool: Tool): PinnedDefinition {
  return {
    name: tool.name,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema as Record<string, unknown>,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema as Record<string, unknown> } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations as Record<string, unknown> } : {}),
  };
}

/** `sha256:` + hex of the canonical JSON of the pinned part (key order never matters). */
export function definitionHash(d: PinnedDefinition): string {
  return `sha256:${createHash("sha256").update(canonicalJson(d)).digest("hex")}`;
}

/** How much of an attacker-controlled name or text a summary repeats. */
const NAME_BYTES = 64;
const TEXT_BYTES = 240;

/** A name from a definition, safe to quote in one line. */
function quoteName(name: string): string {
  // eslint-disable-next-line no-control-regex
  return `"${clipUtf8(name.replace(/[\u0000-\u001f\u007f]/g, ""), NAME_BYTES)}"`;
}

function chars(text: string | undefined): number {
  return [...(text ?? "")].length;
}

function objectOf(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function schemaChanges(label: string, before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): string[] {
  if (canonicalJson(before ?? null) === canonicalJson(after ?? null)) return [];
  if (before === undefined) return [`${label} added`];
  if (after === undefined) return [`${label} removed`];
  const out: string[] = [];
  const bp = objectOf(before["properties"]);
  const ap = objectOf(after["properties"]);
  const added = Object.keys(ap).filter((k) => !Object.hasOwn(bp, k)).sort();
  const removed = Object.keys(bp).filter((k) => !Object.hasOwn(ap, k)).sort();
  const changed = Object.keys(ap).filter((k) => Object.hasOwn(bp, k) && canonicalJson(ap[k]) !== canonicalJson(bp[k])).sort();
  const list = (names: string[]) => names.slice(0, 8).map(quoteName).join(", ") + (names.length > 8 ? ` (+${names.length - 8} more)` : "");
  if (added.length) out.push(`${label}: propert${added.length === 1 ? "y" : "ies"} ${list(added)} added`);
  if (removed.length) out.push(`${label}: propert${removed.length === 1 ? "y" : "ies"} ${list(removed)} removed`);
  if (changed.length) out.push(`${label}: propert${changed.length === 1 ? "y" : "ies"} ${list(changed)} changed`);
  const { properties: _b, ...bRest } = before;
  const { properties: _a, ...aRest } = after;
  if (canonicalJson(bRest) !== canonicalJson(aRest)) {
    const keys = [...new Set([...Object.keys(bRest), ...Object.keys(aRest)])].filter((k) => canonicalJson(bRest[k] ?? null) !== canonicalJson(aRest[k] ?? null)).sort();
    out.push(`${label}: ${keys.slice(0, 6).map(quoteName).join(", ")} changed`);
  }
  return out;
}

function annotationChanges(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): string[] {
  const b = before ?? {};
  const a = after ?? {};
  const out: string[] = [];
  for (const key of [...new Set([...Object.keys(b), ...Object.keys(a)])].sort()) {
    const was = canonicalJson(b[key] ?? null);
    const now = canonicalJson(a[key] ?? null);
    if (was === now) continue;
    const show = (v: unknown) => (v === undefined ? "unset" : clipUtf8(canonicalJson(v), NAME_BYTES));
    out.push(`annotations.${clipUtf8(key, NAME_BYTES)}: ${show(b[key])} → ${show(a[key])}`);
  }
  return out;
}

/**
 * What changed, one short line per change. Safe to show a model: it quotes names (clipped) but
 * never the new description, which is where injected instructions would be.
 */
export function changeSummary(before: PinnedDefinition, after: PinnedDefinition): string[] {
  const out: string[] = [];
  if (before.name !== after.name) out.push(`name: ${quoteName(before.name)} → ${quoteName(after.name)}`);
  if ((before.description ?? "") !== (after.description ?? "")) {
    out.push(`description changed (${chars(before.description)} → ${chars(after.description)} characters)`);
  }
  out.push(...schemaChanges("input_schema", before.inputSchema, after.inputSchema));
  out.push(...schemaChanges("output_schema", before.outputSchema, after.outputSchema));
  out.push(...annotationChanges(before.annotations, after.annotations));
  return out.length ? out : ["the definition changed"];
}

/** The operator's view of a description change: both versions, whitespace collapsed and clipped. */
export function descriptionDiff(before: PinnedDefinition, after: PinnedDefinition): { before: string; after: string } | undefined {
  if ((before.description ?? "") === (after.description ?? "")) return undefined;
  const show = (t: string | undefined) => clipUtf8(collapseWhitespace(t ?? ""), TEXT_BYTES);
  return { before: show(before.description), after: show(after.description) };
}
