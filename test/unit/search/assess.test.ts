// resolve's calibrated assessment (src/catalog/search/assess.ts): the server-agreement rule and the
// calibrated sibling gap, through the real index (ranked and explained as resolve does it).
import { describe, expect, it } from "vitest";
import { ASSESS_RULES, FILE_NAME_WORDS, QUOTED_WORDS, SERVER_HELD_MIN, SERVER_NAME_PLACE, SIBLING_GAP, assessRoute, confidenceFeatures, confidenceOf, contentCoverage, modelEligible } from "../../../src/catalog/search/assess.js";
import { indexEntries, loadExampleCatalog, uniqueEntries } from "../../../bench/bench-data.js";
import { PAYLOAD } from "../../../src/catalog/search/text/tokenize.js";
import { CONFIDENCE_MODEL } from "../../../src/catalog/search/index.js";
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

  it("is on in the shipped rules (eighth calibration round)", () => {
    expect(SERVER_HELD_MIN).toBe(1);
    expect(ASSESS_RULES.serverHeldMin).toBe(1);
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

  it("is calibrated above the second round's 0.2: a sibling 22% behind is close", () => {
    expect(SIBLING_GAP).toBe(0.25);
    const ranking = [match("music", "beat_track", 500), match("music", "get_duration", 390), match("other", "x", 100)];
    const a = assessRoute(ranking, 1, 3);
    expect(a.status).toBe("ambiguous");
    expect(a.reasonCodes).toContain("close_scores");
    // Under the second round's threshold the same ranking was confident.
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

describe("positive evidence in the tool's own text", () => {
  // A request that meets the tool only through its server's text (a tag, use_when): never confident.
  const match = (server: string, tool: string, score: number, own: number): RankedMatch => ({
    entry: entry({ server, tool }),
    score,
    matchedTerms: ["weather"],
    evidence: [{ word: "weather", stem: "weather", tool: own, server: 1, known: true }],
    serverTools: 5,
  });

  it("is required: server text alone never makes an answer confident, however wide the lead", () => {
    expect(ASSESS_RULES.toolEvidence).toBe(true);
    const ranking = [match("weather", "alerts", 500, 0), match("weather", "radar", 100, 0), match("other", "x", 50, 0)];
    const a = assessRoute(ranking, 1, 3);
    expect(a.status).toBe("ambiguous");
    expect(a.reasonCodes).toContain("weak_coverage");
    // The same ranking, the rule off: confident (only this rule stands in its way).
    expect(assessRoute(ranking, 1, 3, { rules: { toolEvidence: false, toolObject: false } }).status).toBe("confident");
  });

  it("is met when the tool's own text holds the word", () => {
    const ranking = [match("weather", "alerts", 500, 1), match("weather", "radar", 100, 0), match("other", "x", 50, 0)];
    expect(assessRoute(ranking, 1, 3).status).toBe("confident");
  });
});

describe("a file's name is a value, not a content word the tool must hold (FILE_NAME_WORDS)", () => {
  const example = () => indexEntries(uniqueEntries(loadExampleCatalog()));
  const status = (q: string): unknown => buildResolveResponse(example(), { query: q }, { revision: REV })["status"];

  it("leaves the words that only name a file out of coverage, and keeps a person's name in", () => {
    const top = (q: string) => example().rank(q, { limit: 12, explain: true }).matches[0];
    const rename = top("rename draft.md to final.md");
    expect(rename?.entry.namespaced).toBe("files__move_file");
    expect(rename?.evidence?.filter((e) => e.fileName).map((e) => e.word)).toEqual(["draft", "final"]);
    expect(contentCoverage(rename?.evidence).share).toBeGreaterThanOrEqual(ASSESS_RULES.coverage);
    expect(status("rename draft.md to final.md")).toBe("confident");
    // A name that is no file's stays a content word no tool holds.
    expect(example().rank("delete the entity Zorblax", { limit: 12, explain: true }).matches[0]?.evidence?.find((e) => e.word === "zorblax")?.fileName).toBeUndefined();
    FILE_NAME_WORDS.counted = true;
    try {
      expect(contentCoverage(rename?.evidence).share).toBeLessThan(ASSESS_RULES.coverage);
      expect(status("rename draft.md to final.md")).not.toBe("confident");
    } finally {
      FILE_NAME_WORDS.counted = false;
    }
  });
});

describe("a word naming the tool's server says where, not what (SERVER_NAME_PLACE)", () => {
  const example = () => indexEntries(uniqueEntries(loadExampleCatalog()));
  const status = (q: string): unknown => buildResolveResponse(example(), { query: q }, { revision: REV })["status"];

  it("leaves the server's name out of the request's object, unless the tool's own text holds it", () => {
    const q = "delete Carol from memory";
    const top = example().rank(q, { limit: 12, explain: true }).matches[0];
    expect(top?.entry.namespaced).toBe("memory__delete_entities");
    expect(top?.evidence?.find((e) => e.word === "memory")).toMatchObject({ serverName: true, tool: 0 });
    expect(contentCoverage(top?.evidence).objectHeld).toBe(true);
    expect(status(q)).toBe("confident");
    // "files" is the files server's name and the object of this request, which the tool holds.
    const files = example().rank("find all the .ts files in this project", { limit: 12, explain: true }).matches[0];
    expect(files?.evidence?.find((e) => e.word === "files")?.serverName).toBe(true);
    expect(contentCoverage(files?.evidence).objectHeld).toBe(true);
    // The "file" a file name stands for is the object, whatever the server is called.
    const moved = example().rank("can you relocate server.log to /tmp/old", { limit: 12, explain: true }).matches[0];
    expect(moved?.evidence?.find((e) => e.word === "file")?.serverName).toBeUndefined();
    SERVER_NAME_PLACE.on = false;
    try {
      expect(contentCoverage(top?.evidence).objectHeld).toBe(false);
      expect(status(q)).not.toBe("confident");
    } finally {
      SERVER_NAME_PLACE.on = true;
    }
  });
});

describe("a quoted word the catalogue does not know is a literal, not a content word (QUOTED_WORDS)", () => {
  const example = () => indexEntries(uniqueEntries(loadExampleCatalog()));
  const status = (q: string): unknown => buildResolveResponse(example(), { query: q }, { revision: REV })["status"];

  it("leaves it out of coverage, and ranks as before", () => {
    const q = 'Create a file hello.txt containing "Hello, world!"';
    const top = example().rank(q, { limit: 12, explain: true }).matches[0];
    expect(top?.entry.namespaced).toBe("files__write_file");
    expect(top?.evidence?.filter((e) => e.quoted).map((e) => e.word)).toEqual(["hello", "world"]);
    expect(status(q)).toBe("confident");
    QUOTED_WORDS.counted = true;
    try {
      expect(status(q)).not.toBe("confident");
      expect(example().rank(q, { limit: 1 }).matches[0]?.entry.namespaced).toBe("files__write_file");
    } finally {
      QUOTED_WORDS.counted = false;
    }
  });
});

describe("a request's payload after its instruction's colon is a literal (PAYLOAD)", () => {
  const example = () => indexEntries(uniqueEntries(loadExampleCatalog()));
  const status = (q: string): unknown => buildResolveResponse(example(), { query: q }, { revision: REV })["status"];

  it("leaves the payload's words out of coverage, known or not; they still rank", () => {
    // "two" after the colon is what to repeat, not a request for get-sum's "two numbers".
    const q = "repeat after me: testing one two";
    const top = example().rank(q, { limit: 12, explain: true }).matches[0];
    expect(top?.evidence?.filter((e) => e.payload).map((e) => e.word)).toEqual(["testing", "two"]);
    expect(status(q)).not.toBe("confident");
    PAYLOAD.known = false;
    try {
      expect(top?.entry.namespaced).toBe("everything__get-sum");
      expect(status(q)).toBe("confident");
    } finally {
      PAYLOAD.known = true;
    }
    // No payload: a colon after a digit or before no space (10:30, C:\, https:) opens none.
    const payload = (t: string) => example().rank(t, { limit: 1, explain: true }).matches[0]?.evidence?.some((e) => e.payload);
    expect(payload("move the 10:30 notes.md to C:\\archive")).toBe(false);
    expect(status("rename draft.md to final.md")).toBe("confident");
  });
});

describe("calibrated confidence (CONFIDENCE_MODEL)", () => {
  /** The README example config's catalogue size (everything, memory, files). */
  const EXAMPLE_TOOLS = 40;
  const match = (server: string, tool: string, score: number, action: number): RankedMatch => ({
    entry: entry({ server, tool }),
    score,
    matchedTerms: ["delete", "relation"],
    evidence: [
      { word: "delete", stem: "delet", tool: 1, server: 0, known: true, verb: true },
      { word: "relation", stem: "relat", tool: 1, server: 1, known: true },
    ],
    serverTools: 9,
    action,
  });

  it("is fitted with a threshold for precision, and is what ASSESS_RULES uses", () => {
    expect(ASSESS_RULES.modelThreshold).toBe(CONFIDENCE_MODEL.threshold);
    expect(CONFIDENCE_MODEL.threshold).toBeGreaterThanOrEqual(0.9);
    expect(CONFIDENCE_MODEL.threshold).toBeLessThanOrEqual(1);
  });

  it("vouches for a strong answer whose sibling is within the sibling gap when the action tells them apart", () => {
    // The sibling is 20% behind (inside SIBLING_GAP): the threshold rules alone say close_scores.
    const ranking = [match("memory", "delete_relations", 800, 1), match("memory", "create_relations", 640, 0), match("files", "x", 60, 0)];
    const f = confidenceFeatures(ranking, EXAMPLE_TOOLS);
    expect(f?.actionSeparates).toBe(1);
    expect(confidenceOf(f as NonNullable<typeof f>)).toBeGreaterThanOrEqual(CONFIDENCE_MODEL.threshold);
    expect(assessRoute(ranking, 2, 3, { catalogSize: EXAMPLE_TOOLS })).toMatchObject({ status: "confident", reasonCodes: ["clear_margin"] });
    expect(assessRoute(ranking, 2, 3, { catalogSize: EXAMPLE_TOOLS, rules: { modelThreshold: 2 } })).toMatchObject({ status: "ambiguous" });
    // Without the catalogue's size the model's probability is undefined: it does not vouch.
    expect(assessRoute(ranking, 2, 3)).toMatchObject({ status: "ambiguous" });
  });

  it("reads the same lead as weaker evidence in a larger catalogue (more near-namesakes per tool)", () => {
    const ranking = [match("memory", "delete_relations", 800, 1), match("memory", "create_relations", 600, 0), match("files", "x", 60, 0)];
    const small = confidenceOf(confidenceFeatures(ranking, EXAMPLE_TOOLS) as NonNullable<ReturnType<typeof confidenceFeatures>>);
    const large = confidenceOf(confidenceFeatures(ranking, 3324) as NonNullable<ReturnType<typeof confidenceFeatures>>);
    expect(CONFIDENCE_MODEL.logTools).toBeLessThan(0);
    expect(large).toBeLessThan(small);
  });

  it("does not vouch when the sibling's action agrees as much (nothing tells them apart)", () => {
    // Scores as the example config's siblings reach them ("show me what's in README.md":
    // read_text_file 202, read_multiple_files 183).
    const ranking = [match("memory", "delete_relations", 200, 1), match("memory", "delete_entities", 175, 1), match("files", "x", 30, 0)];
    expect(confidenceOf(confidenceFeatures(ranking, EXAMPLE_TOOLS) as NonNullable<ReturnType<typeof confidenceFeatures>>)).toBeLessThan(CONFIDENCE_MODEL.threshold);
    expect(assessRoute(ranking, 2, 3, { catalogSize: EXAMPLE_TOOLS }).reasonCodes).toContain("close_scores");
  });

  it("never vouches past a tie or without the tool's own evidence", () => {
    const tie = [match("memory", "delete_relations", 800, 1), match("memory", "create_relations", 800, 0), match("files", "x", 60, 0)];
    expect(assessRoute(tie, 2, 3, { catalogSize: EXAMPLE_TOOLS }).status).toBe("ambiguous");
    const serverOnly = tie.map((m, i) => ({ ...m, score: i === 0 ? 2000 : m.score, evidence: (m.evidence ?? []).map((e) => ({ ...e, tool: 0 })) }));
    expect(modelEligible(serverOnly)).toBe(false);
    expect(assessRoute(serverOnly, 2, 3, { catalogSize: EXAMPLE_TOOLS }).status).toBe("ambiguous");
  });
});
