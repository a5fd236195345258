// resolve's calibrated assessment (src/catalog/search/assess.ts): the server-agreement rule and the
// calibrated sibling gap, through the real index (ranked and explained as resolve does it).
import { describe, expect, it } from "vitest";
import { ASSESS_RULES, SERVER_HELD_MIN, SIBLING_GAP, assessRoute } from "../../../src/catalog/search/assess.js";
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

// The server-agreement rule is a calibration option: off since the third round (SERVER_HELD_MIN 0),
// swept by bench/calibrate.ts; it is checked here as the sweep applies it.
describe("server agreement (calibration option)", () => {
  // At the second round's coverage (0.5), which this request meets with two of its four words.
  const on = { rules: { serverHeldMin: 1, coverage: 0.5 } };
  const rankOf = (serverDescription: string) => {
    const idx = desktop(serverDescription);
    const q = "type my email into the form field";
    const { matches, total } = idx.rank(q, { limit: 12, explain: true });
    return { matches, total, terms: idx.termCount(q) };
  };

  it("is off in the shipped rules", () => {
    expect(SERVER_HELD_MIN).toBe(0);
    expect(ASSESS_RULES.serverHeldMin).toBe(0);
  });

  it("when on, is not confident when the tool's server text holds none of the request's content words", () => {
    const r = rankOf("Terminal commands, processes and files on this machine");
    expect(r.matches[0]?.entry.namespaced).toBe("desktop__give_feedback");
    const a = assessRoute(r.matches, r.terms, r.total, on);
    expect(a.status).toBe("ambiguous");
    expect(a.reasonCodes).toContain("weak_coverage");
    // The same ranking passes every other rule: only the server rule makes it ambiguous.
    expect(assessRoute(r.matches, r.terms, r.total, { rules: { serverHeldMin: 0, coverage: 0.5 } }).reasonCodes).not.toContain("weak_coverage");
  });

  it("when on, lets the answer through when the server's text agrees (its description names the request's subject)", () => {
    const r = rankOf("Desktop forms and email feedback, processes, files");
    expect(assessRoute(r.matches, r.terms, r.total, on).reasonCodes).not.toContain("weak_coverage");
    const doc = buildResolveResponse(desktop("Desktop forms and email feedback, processes, files"), { query: "type my email into the form field" }, { revision: REV });
    expect(checkResolveContract(doc)).toEqual([]);
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
    evidence: [{ word: "audio", stem: "audio", tool: 1, server: 1, known: true }],
    serverTools: 5,
  });

  it("is calibrated above the second round's 0.2: a sibling 30% behind is close", () => {
    expect(SIBLING_GAP).toBe(0.35);
    const ranking = [match("music", "beat_track", 500), match("music", "get_duration", 350), match("other", "x", 100)];
    const a = assessRoute(ranking, 1, 3);
    expect(a.status).toBe("ambiguous");
    expect(a.reasonCodes).toContain("close_scores");
    // Under the previous threshold the same ranking was confident.
    expect(assessRoute(ranking, 1, 3, { rules: { siblingGap: 0.2 } }).status).toBe("confident");
  });

  it("keeps confident answers whose sibling is further behind than the gap", () => {
    const ranking = [match("music", "beat_track", 500), match("music", "get_duration", 300), match("other", "x", 100)];
    expect(assessRoute(ranking, 1, 3)).toMatchObject({ status: "confident" });
    expect(ASSESS_RULES.siblingGap).toBe(SIBLING_GAP);
  });
});

describe("the tool holds the request's object", () => {
  // A server tagged "testing" whose tool runs a long operation: the request's verb is the tool's,
  // its object ("tests") only the server's.
  const idx = indexOf([
    entry({ server: "demo", tool: "trigger_long_running_operation", description: "Demonstrates a long running operation with progress updates.", tags: ["demo", "testing"] }),
    entry({ server: "demo", tool: "echo", description: "Echoes back the input string.", tags: ["demo", "testing"] }),
    entry({ server: "files", tool: "read_file", description: "Read a file." }),
  ]);
  const assess = (q: string, rules: Record<string, unknown> = {}) => {
    const { matches, total } = idx.rank(q, { limit: 12, explain: true });
    return assessRoute(matches, idx.termCount(q), total, { rules });
  };

  it("is not confident when only the verb is the tool's and the object is the server's", () => {
    expect(ASSESS_RULES.toolObject).toBe(true);
    expect(assess("run the tests")).toMatchObject({ status: "ambiguous" });
    expect(assess("run the tests").reasonCodes).toContain("weak_coverage");
    expect(assess("run the tests", { toolObject: false })).toMatchObject({ status: "confident" });
  });

  it("lets names and values through: an object the catalogue never mentions does not count", () => {
    // At a coverage bar that two-word requests meet with one word, to see this rule alone:
    // "hello" appears nowhere in the catalogue (the value to echo); "testing" is the server's tag.
    expect(assess("echo hello", { coverage: 0.5 })).toMatchObject({ status: "confident" });
    expect(assess("echo testing", { coverage: 0.5 })).toMatchObject({ status: "ambiguous" });
    expect(assess("echo testing", { coverage: 0.5, toolObject: false })).toMatchObject({ status: "confident" });
  });
});
