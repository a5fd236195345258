// Discovery answers while servers are pending: every resolve status stays valid under local-agent's
// contract v1 rules, a confident answer is downgraded, and the pending servers and a retry hint
// are named.
import { describe, expect, it } from "vitest";
import { markListingPending, markResolvePending, SERVERS_PENDING } from "../../../src/catalog/search/pending.js";
import { buildResolveResponse, buildSearchResponse } from "../../../src/catalog/search/responses.js";
import { checkResolveContract } from "../../helpers/resolve-contract.js";
import { indexOf, sampleCatalog } from "./entries.js";

const REV = "catalog-v1-0123456789abcdef01234567";

describe("markResolvePending", () => {
  const idx = indexOf(sampleCatalog());
  const cases = [
    ["confident", "fetch a web page as markdown"],
    ["ambiguous", "github"],
    ["no_match", "zzzqqq xylophone"],
    ["no_match", "the"],
  ] as const;

  for (const [status, query] of cases) {
    it(`keeps a ${status} answer ("${query}") valid and never confident`, () => {
      const plain = buildResolveResponse(idx, { query }, { revision: REV });
      expect(plain.status).toBe(status);
      const marked = markResolvePending(plain, ["slow", "remote"]);
      expect(checkResolveContract(marked, 5)).toEqual([]);
      expect(marked.status).not.toBe("confident");
      expect(marked.status).toBe(status === "confident" ? "ambiguous" : status);
      expect(marked.reason_codes).toEqual([...(plain.reason_codes as string[]), SERVERS_PENDING]);
      expect(marked.servers_pending).toEqual(["slow", "remote"]);
      expect(marked.hint).toBe("servers slow, remote are still starting and not in this answer yet, so it may be incomplete — do not treat it as final; retry in a few seconds (catalog_revision changes when they arrive)");
      expect(marked.catalog_revision).toBe(REV);
      if (status === "confident") expect(marked).toMatchObject({ confidence: "low", ambiguous: true });
    });
  }

  it("leaves answers alone when nothing is pending, and an error document (no status) always", () => {
    const plain = buildResolveResponse(idx, { query: "fetch a web page as markdown" }, { revision: REV });
    expect(markResolvePending(plain, [])).toBe(plain);
    const error = { error: "query exceeds 2048 bytes", max_query_bytes: 2048 };
    expect(markResolvePending(error, ["slow"])).toBe(error);
  });
});

describe("markListingPending", () => {
  it("adds servers_pending and a hint to a search answer", () => {
    const entries = sampleCatalog();
    const doc = buildSearchResponse(indexOf(entries), { query: "fetch" }, { revision: REV, all: entries });
    const marked = markListingPending(doc, ["slow"]);
    expect(marked).toMatchObject({ count: doc.count, servers_pending: ["slow"], hint: expect.stringMatching(/^server slow is still starting/) });
    expect(markListingPending(doc, [])).toBe(doc);
  });
});
