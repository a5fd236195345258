import { describe, expect, it } from "vitest";
import { buildResolveResponse, buildSearchResponse } from "../../../src/catalog/search/responses.js";
import { REASON_CODES, assessRoute } from "../../../src/catalog/search/assess.js";
import { indexEntries, loadExampleCatalog, uniqueEntries } from "../../../bench/bench-data.js";
import type { SearchIndex } from "../../../src/catalog/search/index.js";
import type { CatalogEntry, JsonObject } from "../../../src/catalog/types.js";
import { checkResolveContract } from "../../helpers/resolve-contract.js";
import { entry, indexOf, sampleCatalog } from "./entries.js";

const REV = "catalog-v1-0123456789abcdef01234567";
const seenReasons = new Set<string>();

/** Every resolve document goes through local-agent's parse rules. */
function resolve(idx: SearchIndex, query: string, maxHits?: number, filter?: (e: CatalogEntry) => boolean): JsonObject {
  const doc = buildResolveResponse(idx, { query, ...(maxHits !== undefined ? { max_hits: maxHits } : {}) }, { revision: REV, ...(filter ? { filter } : {}) });
  if (!("error" in doc)) {
    expect(checkResolveContract(doc, maxHits !== undefined && maxHits > 0 && maxHits <= 10 ? maxHits : 5)).toEqual([]);
    expect(checkResolveContract(JSON.stringify(doc))).toEqual([]);
    for (const r of doc["reason_codes"] as string[]) seenReasons.add(r);
  }
  return doc;
}

function search(idx: SearchIndex, args: { query?: string; queries?: string[]; max_hits?: number }, all: CatalogEntry[]): JsonObject {
  return buildSearchResponse(idx, args, { revision: REV, all });
}

function matches(doc: JsonObject): JsonObject[] {
  return doc["matches"] as JsonObject[];
}

function routing(): { idx: SearchIndex; all: CatalogEntry[] } {
  const all = [
    ...sampleCatalog(),
    entry({ server: "alpha", tool: "convert_units", description: "Convert between measurement units." }),
    entry({ server: "beta", tool: "convert_units", description: "Convert between measurement units." }),
    entry({ server: "k8s", tool: "kubeconfig_view", description: "Show the kubeconfig of the cluster." }),
  ];
  return { idx: indexOf(all), all };
}

describe("search_tools response", () => {
  it("has the contract shape, compact matches in field order, and scores", () => {
    const { idx, all } = routing();
    const doc = search(idx, { query: "fetch webpage" }, all);
    expect(Object.keys(doc)).toEqual(["contract_version", "catalog_revision", "query", "count", "returned", "truncated", "byte_limited", "matches", "servers", "hint"]);
    expect(doc["contract_version"]).toBe(1);
    const first = matches(doc)[0];
    expect(first?.["namespaced"]).toBe("hitspec__fetch");
    expect(Object.keys(first ?? {})).toEqual(["namespaced", "description", "score", "matched_terms"]);
    expect(first?.["matched_terms"]).toEqual(["fetch", "webpage"]);
    // The server's metadata once, not per match.
    expect((doc["servers"] as JsonObject)["hitspec"]).toEqual({ description: expect.any(String) });
    expect(doc["hint"]).toMatch(/describe_tool/);
  });

  it("lists the catalogue by name with score 0 for empty and all-stopword queries", () => {
    const { idx, all } = routing();
    const sorted = all.map((e) => e.namespaced).sort();
    for (const args of [{ query: "" }, { query: "the of and" }, {}, { queries: ["", "y de la"] }]) {
      const doc = search(idx, { ...args, max_hits: 100 }, all);
      expect(matches(doc).map((m) => m["namespaced"])).toEqual(sorted);
      expect(matches(doc).every((m) => !("score" in m))).toBe(true);
      expect(doc["count"]).toBe(all.length);
    }
    const filtered = buildSearchResponse(idx, { query: "" }, { revision: REV, all, filter: (e) => e.server === "github" });
    expect(matches(filtered).map((m) => String(m["namespaced"]).split("__")[0])).toEqual(["github", "github", "github"]);
  });

  it("returns no matches (not the catalogue) when words match nothing", () => {
    const { idx, all } = routing();
    const doc = search(idx, { query: "zebra quantum" }, all);
    expect(doc["count"]).toBe(0);
    expect(matches(doc)).toEqual([]);
  });

  it("clamps max_hits: ≤0 → 20, >100 → 100, and reports count/returned/truncated", () => {
    const many = Array.from({ length: 130 }, (_, i) => entry({ server: `s${String(i).padStart(3, "0")}`, tool: "ping", description: "Ping." }));
    const idx = indexOf(many);
    const ask = (max_hits?: number): JsonObject => search(idx, { query: "ping", ...(max_hits !== undefined ? { max_hits } : {}) }, many);
    expect(ask()["returned"]).toBe(20);
    expect(ask(0)["returned"]).toBe(20);
    expect(ask(-3)["returned"]).toBe(20);
    expect(ask(5)).toMatchObject({ count: 130, returned: 5, truncated: true, byte_limited: false });
    expect(ask(1000)).toMatchObject({ count: 130, returned: 100, truncated: true });
  });

  it("stops the match array at 12 KiB and flags byte_limited", () => {
    const long = "x".repeat(250);
    const many = Array.from({ length: 90 }, (_, i) => entry({ server: `s${String(i).padStart(3, "0")}`, tool: "ping", description: `Ping ${long}` }));
    const doc = search(indexOf(many), { query: "ping", max_hits: 100 }, many);
    expect(doc["byte_limited"]).toBe(true);
    expect(doc["truncated"]).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(doc["matches"]))).toBeLessThanOrEqual(12288);
    expect((doc["returned"] as number) < 90).toBe(true);
  });

  it("compacts long metadata and flags metadata_truncated", () => {
    const e = entry({
      server: "big",
      tool: "ping",
      title: "T".repeat(300),
      description: `Ping   the\n\nhost ${"d".repeat(400)}`,
      serverDescription: "S".repeat(300),
      tags: ["a", "b", "c", "d", "e", "f", "g", ""],
      useWhen: ["one", "two", "three", "four"],
    });
    const doc = search(indexOf([e]), { query: "ping" }, [e]);
    const m = matches(doc)[0] ?? {};
    expect(m["metadata_truncated"]).toBe(true);
    expect(Buffer.byteLength(m["title"] as string)).toBeLessThanOrEqual(160);
    expect(Buffer.byteLength(m["description"] as string)).toBeLessThanOrEqual(160);
    expect((m["description"] as string).startsWith("Ping the host d")).toBe(true);
    expect((m["description"] as string).endsWith("…")).toBe(true);
    const server = (doc["servers"] as JsonObject)["big"] as JsonObject;
    expect(Buffer.byteLength(server["description"] as string)).toBeLessThanOrEqual(160);
    expect(server["use_when"]).toEqual(["one", "two", "three"]);
    expect(server["tags"]).toBeUndefined();
    const plain = search(indexOf(sampleCatalog()), { query: "send email" }, sampleCatalog());
    expect(matches(plain)[0]?.["metadata_truncated"]).toBeUndefined();
  });

  it("cuts descriptions at a sentence boundary and leaves out titles that only repeat the name", () => {
    const e = entry({
      server: "files",
      tool: "read_text_file",
      title: "Read Text File",
      description: "Read the complete contents of a file as text. Handles various text encodings and provides detailed error messages if the file cannot be read or decoded from its encoding. Use head or tail for parts.",
    });
    const m = matches(search(indexOf([e]), { query: "read file" }, [e]))[0] ?? {};
    expect(m["description"]).toBe("Read the complete contents of a file as text.");
    expect(m["title"]).toBeUndefined();
    expect(m["metadata_truncated"]).toBe(true);
    const titled = entry({ server: "files", tool: "read_file", title: "Read File (Deprecated)", description: "Read a file." });
    expect(matches(search(indexOf([titled]), { query: "read file" }, [titled]))[0]?.["title"]).toBe("Read File (Deprecated)");
  });

  it("cuts queries over 2048 bytes at a code point, says so, and never echoes the rest", () => {
    const { idx, all } = routing();
    const long = "send email ".repeat(150) + "ü".repeat(1025); // well over 2048 bytes, multi-byte tail
    const doc = search(idx, { query: long }, all);
    expect(doc["error"]).toBeUndefined();
    expect(doc["reason_codes"]).toEqual(["query_truncated"]);
    expect(Buffer.byteLength(doc["query"] as string)).toBeLessThanOrEqual(2048);
    expect(matches(doc)[0]?.["namespaced"]).toBe("mail__send_email");
    expect(search(idx, { queries: ["ok", long] }, all)["reason_codes"]).toEqual(["query_truncated"]);
    const r = resolve(idx, long);
    expect(r).toMatchObject({ status: "ambiguous", ambiguous: true });
    expect(r["reason_codes"]).toContain("query_truncated");
    expect(Buffer.byteLength(r["query"] as string)).toBeLessThanOrEqual(2048);
    expect(r["query"] as string).not.toContain("\ufffd");
    expect(search(idx, { query: "a".repeat(2048) }, all)["reason_codes"]).toBeUndefined();
  });

  it("answers every query with a contract-v1 document: empty, base64 blobs, control characters, other scripts", () => {
    const { idx, all } = routing();
    const base64 = Buffer.from(Array.from({ length: 15000 }, (_, i) => (i * 7919) % 256)).toString("base64"); // 20 KB
    const queries = ["", "   ", base64, "\u0000\u0001\u0007delete\u001bbranch\u007f", "删除分支", "удалить ветку", "حذف الفرع", "🔥🔥🔥", "\ud800lonely surrogate", "a".repeat(5000), "x\n".repeat(3000)];
    for (const q of queries) {
      const r = resolve(idx, q); // checks the contract
      expect(typeof r["status"]).toBe("string");
      const sdoc = search(idx, { query: q }, all);
      expect(sdoc["contract_version"]).toBe(1);
      expect(Array.isArray(sdoc["matches"])).toBe(true);
      expect(typeof sdoc["count"]).toBe("number");
    }
  });

  it("merges several queries, each query's best first, without duplicates", () => {
    const { idx, all } = routing();
    const doc = search(idx, { queries: ["send email", "kubeconfig", "email message"] }, all);
    const ns = matches(doc).map((m) => m["namespaced"]);
    expect(ns.slice(0, 2)).toEqual(["mail__send_email", "k8s__kubeconfig_view"]);
    expect(new Set(ns).size).toBe(ns.length);
    expect(doc["query"]).toBeUndefined();
    const eleven = search(idx, { queries: [...Array.from({ length: 10 }, () => "kubeconfig"), "send email"] }, all);
    expect(eleven["reason_codes"]).toEqual(["too_many_queries"]);
    expect(matches(eleven).map((m) => m["namespaced"])).not.toContain("mail__send_email");
  });

  it("puts an exact name first and is deterministic", () => {
    const { idx, all } = routing();
    expect(matches(search(idx, { query: "beta__convert_units" }, all))[0]?.["namespaced"]).toBe("beta__convert_units");
    expect(matches(search(idx, { query: "kubeconfig_view" }, all))[0]?.["namespaced"]).toBe("k8s__kubeconfig_view");
    const a = JSON.stringify(search(idx, { query: "convert units file" }, all));
    const b = JSON.stringify(search(routing().idx, { query: "convert units file" }, all));
    expect(a).toBe(b);
  });
});

describe("resolve_tool response", () => {
  it("recommends with the full contract shape", () => {
    const { idx } = routing();
    const doc = resolve(idx, "create an issue in the repo");
    expect(Object.keys(doc)).toEqual([
      "contract_version", "catalog_revision", "status", "confidence", "reason_codes", "matched_fraction", "score_gap",
      "query", "recommendation", "ambiguous", "alternatives", "alternatives_truncated", "servers", "hint",
    ]);
    const rec = doc["recommendation"] as JsonObject;
    // The v1 fields local-agent reads are all there; empty ones are left out, never null.
    expect(Object.keys(rec)).toEqual([
      "server", "tool", "namespaced", "description", "score", "matched_terms", "metadata_truncated",
      "required_fields", "argument_template", "optional_fields", "argument_template_truncated",
    ]);
    expect(rec).toMatchObject({
      server: "github",
      tool: "create_issue",
      namespaced: "github__create_issue",
      required_fields: ["owner", "repo", "title"],
      argument_template: { owner: "<owner>", repo: "<repo>", title: "<title>" },
      optional_fields: ["body"],
      argument_template_truncated: false,
    });
    expect(doc["status"]).toBe("confident");
    expect(doc["ambiguous"]).toBe(false);
    expect(doc["hint"]).toMatch(/call_tool with tool github__create_issue/);
    expect(JSON.stringify(doc)).not.toContain("null");
  });

  it("answers no_match for generic and non-matching queries", () => {
    const { idx } = routing();
    expect(resolve(idx, "the of and")).toMatchObject({ status: "no_match", confidence: "none", reason_codes: ["query_too_generic"], recommendation: null, ambiguous: false, alternatives: [] });
    const none = resolve(idx, "zebra quantum");
    expect(none).toMatchObject({ status: "no_match", reason_codes: ["no_lexical_overlap"], recommendation: null });
    expect(none["matched_fraction"]).toBeUndefined();
    expect(none["score_gap"]).toBeUndefined();
  });

  it("is confident only with coverage and margin", () => {
    const { idx } = routing();
    expect(resolve(idx, "kubeconfig")).toMatchObject({ status: "confident", confidence: "high", reason_codes: ["single_candidate", "strong_coverage_and_margin"] });
    expect(resolve(idx, "delete branch")).toMatchObject({ status: "confident", confidence: "high", reason_codes: ["strong_coverage_and_margin"] });
    // Two of three content words held (at least COVERAGE), a clear lead: confident, but not high.
    expect(resolve(idx, "kubeconfig cluster zebra")).toMatchObject({ status: "confident", confidence: "medium", reason_codes: ["single_candidate", "clear_margin"] });
    // Half is below it.
    expect(resolve(idx, "kubeconfig zebra")).toMatchObject({ status: "ambiguous", reason_codes: ["single_candidate", "weak_coverage"] });
  });

  it("leaves generic request words out of coverage and is never confident on them alone", () => {
    const { idx } = routing();
    // "show" and "all" say nothing about which tool: no content word, nothing to be sure about.
    const generic = resolve(idx, "show all");
    expect(generic).toMatchObject({ status: "ambiguous", ambiguous: true });
    expect(generic["reason_codes"]).toContain("query_too_generic");
    // "find" is generic: the content word "branch" decides, and the tool holds it.
    expect(resolve(idx, "find and delete the branch")).toMatchObject({ status: "confident" });
  });

  it("is never confident while servers are pending or when the query was cut", () => {
    const { idx } = routing();
    const pending = buildResolveResponse(idx, { query: "delete branch" }, { revision: REV, pendingServers: 2 });
    expect(checkResolveContract(pending)).toEqual([]);
    expect(pending).toMatchObject({ status: "ambiguous", ambiguous: true });
    expect(pending["reason_codes"]).toContain("servers_pending");
    for (const r of pending["reason_codes"] as string[]) seenReasons.add(r);
    const none = buildResolveResponse(idx, { query: "zebra quantum" }, { revision: REV, pendingServers: 1 });
    expect(none).toMatchObject({ status: "no_match", reason_codes: ["no_lexical_overlap", "servers_pending"] });
  });

  it("is ambiguous on ties, close scores, weak coverage and low matched fraction", () => {
    const { idx } = routing();
    const tie = resolve(idx, "convert units");
    expect(tie).toMatchObject({ status: "ambiguous", confidence: "low", ambiguous: true, score_gap: 0 });
    expect(tie["reason_codes"]).toContain("score_tie");
    expect((tie["recommendation"] as JsonObject)["namespaced"]).toBe("alpha__convert_units");
    expect(tie["hint"]).toMatch(/don't auto-run it/);
    // Read and write both carry "file" and "disk", a point or two apart: close, not a tie.
    expect(resolve(idx, "file disk")["reason_codes"]).toContain("close_scores");
    expect(resolve(idx, "kubeconfig zebra quantum lattice")["reason_codes"]).toEqual(["single_candidate", "weak_coverage"]);
    expect(resolve(idx, "kubeconfig zebra nebula")["reason_codes"]).toEqual(["single_candidate", "weak_coverage"]);
    const low = resolve(idx, "send email with the quarterly report attached to finance team members today quickly");
    expect(low).toMatchObject({ status: "ambiguous" });
    expect(low["reason_codes"]).toContain("low_matched_fraction");
  });

  it("bounds alternatives by max_hits (default 5, >10 → 5) and flags alternatives_truncated", () => {
    const many = Array.from({ length: 30 }, (_, i) => entry({ server: `s${String(i).padStart(2, "0")}`, tool: "ping", description: "Ping a host." }));
    const idx = indexOf(many);
    const def = resolve(idx, "ping host");
    expect((def["alternatives"] as unknown[]).length).toBe(5);
    expect(def["alternatives_truncated"]).toBe(true);
    expect((resolve(idx, "ping host", 50)["alternatives"] as unknown[]).length).toBe(5);
    expect((resolve(idx, "ping host", 10)["alternatives"] as unknown[]).length).toBe(10);
    expect((resolve(idx, "ping host", 2)["alternatives"] as unknown[]).length).toBe(2);
    const few = indexOf(many.slice(0, 3));
    expect(resolve(few, "ping host")["alternatives_truncated"]).toBe(false);
  });

  it("bounds the argument template and says so in the hint", () => {
    const props = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`field${i}`, { type: "string" }]));
    const e = entry({ server: "wide", tool: "configure", description: "Configure everything.", inputSchema: { type: "object", properties: props, required: ["field1", "field2"] } });
    const doc = resolve(indexOf([e]), "configure everything");
    const rec = doc["recommendation"] as JsonObject;
    expect(rec["argument_template_truncated"]).toBe(false);
    expect(rec["argument_template"]).toEqual({ field1: "<field1>", field2: "<field2>" });
    expect(rec["optional_fields"]).toHaveLength(16);
    // A template cut by a bound says so, and the hint says to describe the tool first.
    const deep = entry({ server: "deep", tool: "nest", description: "Nest things.", inputSchema: { type: "object", required: ["n"], properties: { n: { $ref: "#/$defs/n" } }, $defs: { n: { type: "object", required: ["c"], properties: { c: { $ref: "#/$defs/n" } } } } } });
    const bounded = resolve(indexOf([deep]), "nest things");
    expect((bounded["recommendation"] as JsonObject)["argument_template_truncated"]).toBe(true);
    expect(bounded["hint"]).toContain("describe_tool for deep__nest");
  });

  it("respects the scope filter", () => {
    const { idx } = routing();
    const doc = resolve(idx, "convert units", 5, (e) => e.server === "beta");
    expect((doc["recommendation"] as JsonObject)["namespaced"]).toBe("beta__convert_units");
    expect(doc["alternatives"]).toEqual([]);
  });

  it("in hybrid ranking, is confident only when the fused top is the lexical top", () => {
    const { idx } = routing();
    // A ranker whose own order puts another tool first (as fusion may): the lexical evidence is
    // for delete_branch, so the answer cannot be confident about the fused top.
    const fused = {
      termCount: (q: string) => idx.termCount(q),
      rank: (q: string, o: { limit: number; explain?: boolean }) => {
        const r = idx.rank(q, { ...o, limit: 20 });
        return { matches: [...r.matches].reverse().slice(0, o.limit), total: r.total };
      },
      assessmentRanking: (q: string, o: { limit: number }) => idx.rank(q, { ...o, explain: true }),
    };
    const doc = buildResolveResponse(fused, { query: "delete branch" }, { revision: REV });
    expect(checkResolveContract(doc)).toEqual([]);
    expect(doc).toMatchObject({ status: "ambiguous", ambiguous: true });
    expect(doc["reason_codes"]).toContain("rankings_disagree");
    for (const r of doc["reason_codes"] as string[]) seenReasons.add(r);
  });

  it("marks a recommendation whose server cannot serve now, names the fix, and is never confident", () => {
    const { idx } = routing();
    const down = { state: "needs_auth", reason: "the token was revoked", fix: "run `mcphub auth login github`" };
    const doc = buildResolveResponse(idx, { query: "delete branch" }, { revision: REV, unavailable: (s) => (s === "github" ? down : undefined) });
    expect(checkResolveContract(doc)).toEqual([]);
    expect(doc).toMatchObject({ status: "ambiguous", ambiguous: true });
    expect(doc["reason_codes"]).toContain("server_unavailable");
    for (const r of doc["reason_codes"] as string[]) seenReasons.add(r);
    expect((doc["servers"] as JsonObject)["github"]).toMatchObject({ state: "needs_auth", reason: "the token was revoked", fix: "run `mcphub auth login github`" });
    expect(doc["hint"]).toBe("do not call github__delete_branch now: server github is needs auth; fix: run `mcphub auth login github`");
  });

  it("names an unavailable server whose metadata matches better than any available tool", () => {
    const { idx } = routing();
    const weather = entry({ server: "weather", tool: "", serverDescription: "Weather forecasts and current conditions", useWhen: ["weather forecast for a city"] });
    const offline = { ranker: indexOf([weather]), isProfile: (e: CatalogEntry) => e.tool === "" };
    const down = (s: string) => (s === "weather" ? { state: "failed", reason: "spawn weather-mcp ENOENT", fix: "run `mcphub doctor --server weather`" } : undefined);
    const capabilities = { hints: { github: "GitHub issues and branches", weather: "Weather forecasts and current conditions" }, more: 0 };
    const doc = buildResolveResponse(idx, { query: "weather forecast for Paris" }, { revision: REV, unavailable: down, offline, capabilities });
    expect(checkResolveContract(doc)).toEqual([]);
    expect(doc["status"]).not.toBe("confident");
    expect(doc["reason_codes"]).toContain("server_unavailable");
    expect(doc["unavailable"]).toEqual([{ server: "weather", state: "failed", reason: "spawn weather-mcp ENOENT", fix: "run `mcphub doctor --server weather`" }]);
    expect(doc["hint"]).toMatch(/server weather is failed; fix: run `mcphub doctor --server weather`/);
    expect(doc["hint"]).not.toMatch(/rephrase/);
    // Search names it too, and the tools it would have found stay out of the matches.
    const sdoc = buildSearchResponse(idx, { query: "weather forecast for Paris" }, { revision: REV, all: [], unavailable: down, offline });
    expect(sdoc["unavailable"]).toEqual([expect.objectContaining({ server: "weather", state: "failed" })]);
    expect(sdoc["hint"]).toMatch(/server weather is failed/);
  });

  it("a weak match carries the other servers' hints only when its own text holds no word of the request", () => {
    const capabilities = { hints: { github: "GitHub issues and branches", mail: "send email" }, more: 0 };
    const idx = indexOf([
      entry({ server: "mem", tool: "add_note", description: "Add a note to a person's record", serverDescription: "Notes about people", useWhen: ["remember facts about people"] }),
      entry({ server: "mem", tool: "read_notes", description: "Read every note", serverDescription: "Notes about people", useWhen: ["remember facts about people"] }),
    ]);
    // Weak (the request's other words are held by nothing), but the tool's own text holds "note":
    // the answer is about this server, and a map of the others would be 200-odd bytes for nothing.
    const held = buildResolveResponse(idx, { query: "add a note that Alice prefers green tea in the morning" }, { revision: REV, capabilities });
    expect(held["reason_codes"]).toContain("weak_coverage");
    expect(held["capabilities"]).toBeUndefined();
    // Only the server's routing text matches ("remember"): the request may be anyone's.
    const stray = buildResolveResponse(idx, { query: "remember to book a flight to Rome" }, { revision: REV, capabilities });
    expect(stray["reason_codes"]).toContain("weak_coverage");
    expect(stray["capabilities"]).toEqual({ github: "GitHub issues and branches", mail: "send email" });
    expect(checkResolveContract(stray)).toEqual([]);
  });

  it("carries each server's one-line capability hint when nothing matches", () => {
    const { idx } = routing();
    const capabilities = { hints: { github: "GitHub issues and branches", mail: "send email" }, more: 2 };
    const doc = buildResolveResponse(idx, { query: "zebra quantum" }, { revision: REV, capabilities });
    expect(doc).toMatchObject({ status: "no_match", capabilities: { github: "GitHub issues and branches", mail: "send email" }, capabilities_more: "2 more servers: call list_servers" });
    expect(checkResolveContract(doc)).toEqual([]);
  });

  it("produced every reason code at least once", () => {
    // Runs last in this file: the cases above exercised the whole vocabulary.
    expect([...seenReasons].sort()).toEqual([...REASON_CODES].sort());
  });
});

describe("resolve contract checker", () => {
  it("rejects documents a client would refuse", () => {
    const { idx } = routing();
    const good = resolve(idx, "delete branch");
    const rec = good["recommendation"] as JsonObject;
    const bad = (patch: JsonObject): string[] => checkResolveContract({ ...good, ...patch });
    expect(bad({ contract_version: 2 })).toContain("contract_version must be 1");
    expect(bad({ catalog_revision: "bad revision!" })).toContain("catalog_revision has a bad length or charset");
    expect(bad({ error: "x" })).toContain("error is present");
    expect(bad({ recommendation: { ...rec, namespaced: "github__other" } })).toContain("recommendation.namespaced != server + '__' + tool");
    expect(bad({ recommendation: null })).toEqual(expect.arrayContaining(["null recommendation requires status no_match"]));
    expect(bad({ alternatives: [{ namespaced: "github__delete_branch" }] })).toContain("an alternative equals the recommendation");
    expect(bad({ alternatives: [{ namespaced: "a__b" }, { namespaced: "a__b" }] })).toContain("alternatives contain duplicates");
    expect(bad({ ambiguous: true })).toContain("confident requires ambiguous false");
    expect(bad({ recommendation: { ...rec, required_fields: ["a b"] } })).toEqual(['required_fields entry "a b" is invalid']);
    expect(checkResolveContract("x".repeat(70000))).toEqual(["document exceeds 64 KiB"]);
  });
});

describe("resolve_tool's calibrated confidence, end to end over the example config's catalogue", () => {
  it("vouches through the builder, which gives the model the catalogue's size", () => {
    // bench/data/example: the README config's 42 tools with its routing metadata. The request's
    // two names are no capability: coverage is below the 0.6 bar, so only the model can vouch.
    const idx = indexEntries(uniqueEntries(loadExampleCatalog()));
    const q = "delete the relation between Zed and Quinn";
    const doc = buildResolveResponse(idx, { query: q }, { revision: REV });
    expect(doc).toMatchObject({ status: "confident", confidence: "medium", reason_codes: ["clear_margin"], recommendation: { namespaced: "memory__delete_relations" } });
    const ranked = idx.rank(q, { limit: 12, explain: true });
    expect(assessRoute(ranked.matches, idx.termCount(q), ranked.total, { catalogSize: idx.size() }).status).toBe("confident");
    // Without the size the model's probability is undefined, and the rules alone find coverage short.
    expect(assessRoute(ranked.matches, idx.termCount(q), ranked.total)).toMatchObject({ status: "ambiguous", reasonCodes: ["weak_coverage"] });
  });
});
