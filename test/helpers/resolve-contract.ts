// A fail-closed checker for the resolve_tool contract v1, implementing the parse rules of the
// real client local-agent (reference §12). Every resolve document a test produces goes through
// it; an empty list means a client would accept the document.

const MAX_DOCUMENT_BYTES = 64 * 1024;
const MAX_ALTERNATIVES = 10;
const REVISION = /^[A-Za-z0-9_\-.:/]+$/;
const IDENTIFIER = /^[A-Za-z0-9_\-.:/]+$/;
const REQUIRED_FIELD = /^[A-Za-z0-9_\-.:/$[\]]+$/;
const STATUSES = new Set(["confident", "ambiguous", "no_match"]);

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function bytes(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

function identifierProblem(value: unknown, label: string): string | undefined {
  if (typeof value !== "string") return `${label} must be a string`;
  if (value.length === 0 || value !== value.trim()) return `${label} must be non-empty and trimmed`;
  if (bytes(value) > 256) return `${label} exceeds 256 bytes`;
  if (!IDENTIFIER.test(value)) return `${label} has characters outside [A-Za-z0-9_-.:/]`;
  return undefined;
}

/**
 * Checks a resolve document (the parsed structuredContent, or the text to parse). `maxAlternatives`
 * is the max_hits the caller sent (local-agent's advisor sends 5).
 */
export function checkResolveContract(doc: unknown, maxAlternatives = MAX_ALTERNATIVES): string[] {
  const v: string[] = [];
  let value = doc;
  if (typeof doc === "string") {
    if (bytes(doc) > MAX_DOCUMENT_BYTES) return ["document exceeds 64 KiB"];
    try {
      value = JSON.parse(doc) as unknown;
    } catch {
      return ["document is not JSON"];
    }
  }
  if (!isRecord(value)) return ["document is not a JSON object"];
  if (bytes(JSON.stringify(value)) > MAX_DOCUMENT_BYTES) v.push("document exceeds 64 KiB");
  if (value["contract_version"] !== 1) v.push("contract_version must be 1");
  const status = value["status"];
  if (typeof status !== "string") v.push("status is missing");
  else if (!STATUSES.has(status)) v.push(`unknown status ${status}`);
  const revision = value["catalog_revision"];
  if (typeof revision !== "string" || revision.length === 0) v.push("catalog_revision is missing or empty");
  else if (bytes(revision) > 128 || !REVISION.test(revision)) v.push("catalog_revision has a bad length or charset");
  if (value["error"] !== undefined && value["error"] !== null) v.push("error is present");
  for (const key of ["ambiguous", "recommendation", "alternatives"]) {
    if (!(key in value)) v.push(`${key} is missing`);
  }
  const ambiguous = value["ambiguous"];
  if (typeof ambiguous !== "boolean") v.push("ambiguous must be a boolean");

  const alternatives = value["alternatives"];
  const altNames: string[] = [];
  if (!Array.isArray(alternatives)) v.push("alternatives must be an array");
  else {
    if (alternatives.length > maxAlternatives) v.push(`more than ${maxAlternatives} alternatives`);
    alternatives.forEach((alt, i) => {
      if (!isRecord(alt)) {
        v.push(`alternatives[${i}] is not an object`);
        return;
      }
      const p = identifierProblem(alt["namespaced"], `alternatives[${i}].namespaced`);
      if (p) v.push(p);
      else altNames.push(alt["namespaced"] as string);
    });
    if (new Set(altNames).size !== altNames.length) v.push("alternatives contain duplicates");
  }

  const rec = value["recommendation"];
  if (rec === null) {
    if (status !== "no_match") v.push("null recommendation requires status no_match");
    if (ambiguous !== false) v.push("null recommendation requires ambiguous false");
    if (Array.isArray(alternatives) && alternatives.length > 0) v.push("null recommendation requires no alternatives");
  } else if (isRecord(rec)) {
    const server = rec["server"];
    const tool = rec["tool"];
    const sp = identifierProblem(server, "recommendation.server");
    if (sp) v.push(sp);
    else if ((server as string).includes("__")) v.push("recommendation.server contains __");
    const tp = identifierProblem(tool, "recommendation.tool");
    if (tp) v.push(tp);
    const ns = rec["namespaced"];
    const np = identifierProblem(ns, "recommendation.namespaced");
    if (np) v.push(np);
    if (typeof server === "string" && typeof tool === "string" && ns !== `${server}__${tool}`) {
      v.push("recommendation.namespaced != server + '__' + tool");
    }
    if (typeof ns === "string" && altNames.includes(ns)) v.push("an alternative equals the recommendation");
    const req = rec["required_fields"];
    if (!Array.isArray(req)) v.push("recommendation.required_fields must be an array");
    else {
      if (req.length > 48) v.push("required_fields has more than 48 entries");
      let total = 0;
      const seen = new Set<string>();
      for (const f of req) {
        if (typeof f !== "string" || f.length === 0 || bytes(f) > 128 || !REQUIRED_FIELD.test(f)) {
          v.push(`required_fields entry ${JSON.stringify(f)} is invalid`);
          continue;
        }
        if (seen.has(f)) v.push(`required_fields entry ${f} is duplicated`);
        seen.add(f);
        total += bytes(f);
      }
      if (total > 2048) v.push("required_fields exceed 2048 bytes");
    }
    for (const flag of ["metadata_truncated", "argument_template_truncated"]) {
      if (flag in rec && typeof rec[flag] !== "boolean") v.push(`recommendation.${flag} must be a boolean`);
    }
    if (status === "no_match") v.push("no_match must not carry a recommendation");
  } else if (rec !== undefined) {
    v.push("recommendation must be an object or null");
  }
  if ("alternatives_truncated" in value && typeof value["alternatives_truncated"] !== "boolean") {
    v.push("alternatives_truncated must be a boolean");
  }
  if (status === "confident" && ambiguous !== false) v.push("confident requires ambiguous false");
  if (status === "ambiguous" && ambiguous !== true) v.push("ambiguous status requires ambiguous true");
  if (ambiguous === true && status !== "ambiguous") v.push("ambiguous true requires status ambiguous");
  return v;
}
