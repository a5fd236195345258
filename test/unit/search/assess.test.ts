// resolve's calibrated assessment (src/catalog/search/assess.ts): the server-agreement rule and the
// calibrated sibling gap, through the real index (ranked and explained as resolve does it).
import { describe, expect, it } from "vitest";
import { ASSESS_RULES, SIBLING_GAP, assessRoute } from "../../../src/catalog/search/assess.js";
import { buildResolveResponse } from "../../../src/catalog/search/responses.js";
import type { RankedMatch } from "../../../src/catalog/search/index.js";
import { checkResolveContract } from "../../helpers/resolve-contract.js";
import { entry, indexOf } from "./entries.js";

const REV = "catalog-v1-0123456789abcdef01234567";

/** A desktop-automation server with many tools, one of which mentions email and a form by chance. */
function desktop(serverDescription: string) {
  return indexOf([
    entry({ server: "desktop", tool: "give_feedback", description: "Open the feedback form; asks for your email.", serverDescription }),
    entry({ server: "desktop", tool: "kill_process", description: "Terminate a running process by PID.", serverDescription }),
    entry({ server: "desktop", tool: "list_processes", description: "List running processes.", serverDescription }),
    entry({ server: "desktop", tool: "read_file", description: "Read a file from disk.", serverDescription }),
    entry({ server: "desktop", tool: "move_window", description: "Move an application window.", serverDescription }),
    entry({ server: "chess", tool: "new_game", description: "Start a new chess game." }),
  ]);
}

describe("server agreement", () => {
  it("is not confident when the tool's server text holds none of the request's content words", () => {
    const doc = buildResolveResponse(desktop("Terminal commands, processes and files on this machine"), { query: "type my email into the form field" }, { revision: REV });
    expect(checkResolveContract(doc)).toEqual([]);
    expect((doc["recommendation"] as { namespaced: string }).namespaced).toBe("desktop__give_feedback");
    expect(doc).toMatchObject({ status: "ambiguous", confidence: "low" });
    expect(doc["reason_codes"]).toContain("weak_coverage");
    // The same ranking passes every other rule: only the server rule makes it ambiguous.
    const idx = desktop("Terminal commands, processes and files on this machine");
    const { matches, total } = idx.rank("type my email into the form field", { limit: 12, explain: true });
    expect(assessRoute(matches, idx.termCount("type my email into the form field"), total, { rules: { serverHeldMin: 0 } }).status).toBe("confident");
  });

  it("is confident when the server's text agrees (its description names the request's subject)", () => {
    const doc = buildResolveResponse(desktop("Desktop forms and email feedback, processes, files"), { query: "type my email into the form field" }, { revision: REV });
    expect(doc).toMatchObject({ status: "confident" });
  });

  it("exempts a server with a single tool (its text is that tool's)", () => {
    const idx = indexOf([
      entry({ server: "fetch", tool: "fetch", description: "Fetch a web page by URL and return it as Markdown.", serverDescription: "HTTP fetching" }),
      entry({ server: "chess", tool: "new_game", description: "Start a new chess game." }),
    ]);
    const { matches } = idx.rank("fetch a web page as markdown", { limit: 12, explain: true });
    expect(matches[0]?.serverTools).toBe(1);
    expect(buildResolveResponse(idx, { query: "fetch a web page as markdown" }, { revision: REV })).toMatchObject({ status: "confident" });
  });
});

describe("sibling gap", () => {
  const match = (server: string, tool: string, score: number): RankedMatch => ({
    entry: entry({ server, tool }),
    score,
    matchedTerms: ["audio"],
    evidence: [{ word: "audio", stem: "audio", tool: 1, server: 1, meta: 1, known: true }],
    serverTools: 5,
  });

  it("is calibrated above the old 0.15: a sibling 18% behind is close", () => {
    expect(SIBLING_GAP).toBe(0.2);
    const ranking = [match("music", "beat_track", 543), match("music", "get_duration", 446), match("other", "x", 100)];
    const a = assessRoute(ranking, 1, 3);
    expect(a.status).toBe("ambiguous");
    expect(a.reasonCodes).toContain("close_scores");
    // Under the previous threshold the same ranking was confident.
    expect(assessRoute(ranking, 1, 3, { rules: { siblingGap: 0.15 } }).status).toBe("confident");
  });

  it("keeps confident answers whose sibling is further behind than the gap", () => {
    const ranking = [match("music", "beat_track", 500), match("music", "get_duration", 390), match("other", "x", 100)];
    expect(assessRoute(ranking, 1, 3)).toMatchObject({ status: "confident" });
    expect(ASSESS_RULES.siblingGap).toBe(SIBLING_GAP);
  });
});
