import { describe, expect, it } from "vitest";
import { afterEach } from "vitest";
import { conceptsOf, SCORER, SearchIndex } from "../../../src/catalog/search/index.js";
import { searchTerms } from "../../../src/catalog/search/text/tokenize.js";
import { ACTION } from "../../../src/catalog/search/signals/action.js";
import { entry, indexOf, sampleCatalog } from "./entries.js";

const names = (idx: SearchIndex, q: string): string[] => idx.search(q).map((m) => m.entry.namespaced);

const savedScorer = { ...SCORER };
const savedAction = { ...ACTION };
afterEach(() => {
  Object.assign(SCORER, savedScorer);
  Object.assign(ACTION, savedAction);
});

describe("SearchIndex ranking", () => {
  it("finds tools through synonyms of intent words", () => {
    const idx = indexOf(sampleCatalog());
    expect(names(idx, "download a webpage")[0]).toBe("hitspec__fetch");
    expect(names(idx, "remove branch")[0]).toBe("github__delete_branch");
    expect(names(idx, "add issue")[0]).toBe("github__create_issue");
    expect(names(idx, "enumerate repos")[0]).toBe("github__list_repositories");
    expect(names(idx, "lookup notes")[0]).toBe("notes__search_notes");
    expect(names(idx, "post an email")[0]).toBe("mail__send_email");
  });

  it("prefers the literal word over a synonym", () => {
    const idx = indexOf([
      entry({ server: "a", tool: "download_file", description: "Download a file." }),
      entry({ server: "b", tool: "get_file", description: "Get a file." }),
    ]);
    expect(names(idx, "download file")).toEqual(["a__download_file", "b__get_file"]);
  });

  it("matches stems, camelCase names, prefixes and one-letter typos", () => {
    const idx = indexOf(sampleCatalog());
    expect(names(idx, "resizing images")[0]).toBe("media__resizeImage");
    expect(names(idx, "resize")[0]).toBe("media__resizeImage");
    expect(names(idx, "repositor")[0]).toBe("github__list_repositories"); // prefix
    expect(names(idx, "emial")[0]).toBe("mail__send_email"); // transposition
    expect(names(idx, "repositries")[0]).toBe("github__list_repositories"); // deletion
  });

  it("ranks Spanish queries with folded diacritics", () => {
    const idx = indexOf(sampleCatalog());
    expect(names(idx, "quiero descargar una página web")[0]).toBe("hitspec__fetch");
    expect(names(idx, "borrar la rama")).toContain("github__delete_branch");
  });

  it("reports matched terms in query order", () => {
    const idx = indexOf(sampleCatalog());
    const top = idx.search("write text file")[0];
    expect(top?.entry.namespaced).toBe("files__write_file");
    expect(top?.matchedTerms).toEqual(["write", "text", "file"]);
  });

  it("counts one idea said twice once: synonyms in a query form one concept", () => {
    const terms = conceptsOf(searchTerms("download the page and save it as markdown md, then write a note"));
    expect(terms.map((c) => c.map((t) => t.word))).toEqual([["download"], ["page"], ["save", "write"], ["markdown", "md"], ["note"]]);
    expect(new SearchIndex().termCount("markdown md")).toBe(1);

    const idx = indexOf([
      entry({ server: "media", tool: "resize", description: "Resize an image: png, photo or picture." }),
      entry({ server: "web", tool: "download_page", description: "Download a web page." }),
    ]);
    // "image picture photo png" is one idea said four ways; "download" and "page" are two ideas,
    // so the page downloader covers more of the task.
    expect(names(idx, "download the page as an image picture photo png")[0]).toBe("web__download_page");
    // matched_terms names each matched concept once, by its first word, so it never counts more
    // ideas than the query has.
    const top = idx.search("resize image png")[0];
    expect(top?.matchedTerms).toEqual(["resize", "image"]);
  });

  it("returns an exact tool name first: namespaced, wire, or a unique public fragment", () => {
    const idx = indexOf([
      ...sampleCatalog(),
      entry({ server: "bob", tool: "context", wire: "bob_context", description: "Project context for the current file." }),
    ]);
    expect(names(idx, "files__write_file")[0]).toBe("files__write_file");
    expect(names(idx, "FILES__WRITE_FILE")[0]).toBe("files__write_file");
    expect(names(idx, "bob_context")[0]).toBe("bob__context");
    expect(names(idx, "send_email")[0]).toBe("mail__send_email");
    // Outside the filter, the fast path does not apply.
    const filtered = idx.search("send_email", { filter: (e) => e.server !== "mail" });
    expect(filtered.map((m) => m.entry.namespaced)).not.toContain("mail__send_email");
  });

  it("ignores empty and all-stopword queries", () => {
    const idx = indexOf(sampleCatalog());
    expect(idx.search("")).toEqual([]);
    expect(idx.search("the of and")).toEqual([]);
    expect(idx.search("zebra quantum")).toEqual([]);
  });

  it("is deterministic and breaks ties by name", () => {
    const make = (): SearchIndex =>
      indexOf([
        entry({ server: "zeta", tool: "convert_units", description: "Convert between units." }),
        entry({ server: "alpha", tool: "convert_units", description: "Convert between units." }),
        entry({ server: "mid", tool: "convert_units", description: "Convert between units." }),
      ]);
    const a = make().search("convert units");
    const b = make().search("convert units");
    expect(a).toEqual(b);
    expect(a.map((m) => m.entry.namespaced)).toEqual(["alpha__convert_units", "mid__convert_units", "zeta__convert_units"]);
    expect(new Set(a.map((m) => m.score)).size).toBe(1);
  });

  it("applies the filter and maxHits", () => {
    const idx = indexOf(sampleCatalog());
    const r = idx.search("github repository issue branch", { filter: (e) => e.tool !== "create_issue", maxHits: 2 });
    expect(r).toHaveLength(2);
    expect(r.map((m) => m.entry.tool)).not.toContain("create_issue");
  });

  it("re-indexing one server leaves the other servers' results unchanged", () => {
    const idx = indexOf(sampleCatalog());
    const before = idx.search("read file disk");
    const github = sampleCatalog().filter((e) => e.server === "github");
    idx.setServer("github", github);
    expect(idx.search("read file disk")).toEqual(before);
    // Same number of tools, new words that the query does not use: the files results stay put.
    idx.setServer(
      "github",
      github.map((e) => ({ ...e, description: `${e.description} Pull request helper.` })),
    );
    expect(idx.search("read file disk")).toEqual(before);
    expect(idx.size()).toBe(sampleCatalog().length);
  });

  it("removes a server completely", () => {
    const idx = indexOf(sampleCatalog());
    idx.removeServer("github");
    expect(idx.size()).toBe(sampleCatalog().length - 3);
    expect(names(idx, "repository issue branch")).toEqual([]);
    expect(names(idx, "github__create_issue")).toEqual([]);
    idx.removeServer("github"); // removing twice is harmless
    idx.setServer("github", sampleCatalog().filter((e) => e.server === "github"));
    expect(names(idx, "github__create_issue")[0]).toBe("github__create_issue");
  });

  it("uses server metadata (use_when, tags) and per-tool hints", () => {
    const idx = indexOf([
      entry({ server: "cortex", tool: "plan", description: "Make a plan.", useWhen: ["planning a feature"], tags: ["planning"] }),
      entry({ server: "bob", tool: "plan", description: "Make a plan.", toolUseWhen: ["writing release notes"] }),
    ]);
    expect(names(idx, "release notes")[0]).toBe("bob__plan");
    expect(names(idx, "planning")[0]).toBe("cortex__plan");
  });

  it("finds a capability named in other words: software synonyms and WordNet derivations", () => {
    const idx = indexOf([
      entry({ server: "cal", tool: "create_event", description: "Create a calendar event." }),
      entry({ server: "text", tool: "translator", description: "Translation between languages." }),
      entry({ server: "files", tool: "remove", description: "Deletion of files." }),
    ]);
    expect(names(idx, "schedule a meeting")[0]).toBe("cal__create_event");
    expect(names(idx, "translate this into French")[0]).toBe("text__translator");
    expect(names(idx, "delete old files")[0]).toBe("files__remove");
  });

  it("reads a word the catalogue holds in no form through its WordNet sense-mates, never a word it holds", () => {
    const idx = indexOf([
      entry({ server: "calc", tool: "get_sum", description: "Returns the sum of two numbers." }),
      entry({ server: "notes", tool: "add_note", description: "Add a note." }),
      entry({ server: "shop", tool: "plus_plan", description: "Upgrade to the Plus plan." }),
    ]);
    const calc = indexOf([entry({ server: "calc", tool: "get_sum", description: "Returns the sum of two numbers." }), entry({ server: "notes", tool: "add_note", description: "Add a note." })]);
    // "plus" is in no form in `calc`: its sense-mates (sum, add...) find the sum, below a held word.
    const top = calc.rank("what is 17 plus 25", { limit: 3, explain: true }).matches;
    expect(top.map((m) => m.entry.namespaced)).toContain("calc__get_sum");
    expect(Math.max(...(top[0]?.evidence ?? []).map((e) => e.tool))).toBeLessThan(0.6);
    // Where the catalogue holds the word itself, it means what the catalogue means by it.
    expect(names(idx, "what is 17 plus 25")).toEqual(["shop__plus_plan"]);
    SCORER.unknownMateWeight = 0; // (a fresh index: variants are cached per index)
    const off = indexOf([entry({ server: "calc", tool: "get_sum", description: "Returns the sum of two numbers." }), entry({ server: "notes", tool: "add_note", description: "Add a note." })]);
    expect(names(off, "what is 17 plus 25")).toEqual([]);
  });

  it("reads the shell's file commands as the operations they name (ls, cat, mv, rm, mkdir)", () => {
    const idx = indexOf([
      entry({ server: "fs", tool: "list_directory", description: "Get a detailed listing of all files and directories in a path." }),
      entry({ server: "fs", tool: "read_text_file", description: "Read the complete contents of a file as text." }),
      entry({ server: "fs", tool: "move_file", description: "Move or rename files and directories." }),
      entry({ server: "fs", tool: "delete_file", description: "Delete a file." }),
      entry({ server: "fs", tool: "create_directory", description: "Create a new directory." }),
    ]);
    expect(names(idx, "ls ~/Downloads")[0]).toBe("fs__list_directory");
    expect(names(idx, "cat notes.txt")[0]).toBe("fs__read_text_file");
    expect(names(idx, "mv src/utils.js src/lib/utils.js")[0]).toBe("fs__move_file");
    expect(names(idx, "relocate server.log to /tmp/old")[0]).toBe("fs__move_file");
    expect(names(idx, "rm old.log")[0]).toBe("fs__delete_file");
    expect(names(idx, "mkdir build")[0]).toBe("fs__create_directory");
  });

  it("reads a closed compound the catalogue lacks through its parts, and only a real compound", () => {
    const catalogue = [
      entry({ server: "fs", tool: "list_directory", description: "List the entries of a directory." }),
      entry({ server: "fs", tool: "get_file_info", description: "The size and times of a file, by name." }),
    ];
    const idx = indexOf(catalogue);
    // "subfolders": sub- and "folders", a synonym of directory; "filename": file and name.
    expect(names(idx, "are there any subfolders in assets/?")[0]).toBe("fs__list_directory");
    expect(idx.search("what is the filename size")[0]?.entry.namespaced).toBe("fs__get_file_info");
    // A long head the catalogue cannot read is a word of its own: "hyperfolders" is not split.
    expect(names(idx, "hyperfolders")).toEqual([]);
    SCORER.compoundWeight = 0;
    expect(names(indexOf(catalogue), "are there any subfolders in assets/?")).toEqual([]);
  });

  it("puts a read-only tool first for a question when the evidence is close (questionWeight)", () => {
    const idx = indexOf([
      { ...entry({ server: "notes", tool: "find_notes", description: "Find notes about a topic." }), annotations: { readOnlyHint: true } },
      { ...entry({ server: "notes", tool: "store_notes", description: "Notes about a topic, kept." }), annotations: { readOnlyHint: false, destructiveHint: false } },
    ]);
    expect(names(idx, "what notes are there about the topic?")[0]).toBe("notes__find_notes");
    // A request to act is not a question: the evidence decides.
    expect(names(idx, "notes about the topic")[0]).toBe("notes__store_notes");
    // Without it (and without the search a question implies, which find_notes agrees with) the evidence decides.
    SCORER.questionWeight = 0;
    ACTION.questionSeeks = 0;
    expect(names(idx, "what notes are there about the topic?")[0]).toBe("notes__store_notes");
  });

  it("lifts the tools of a server whose name the request says (serverNameWeight), and only then", () => {
    const catalogue = [
      entry({ server: "memory", tool: "search_nodes", description: "Search for nodes in the knowledge graph." }),
      entry({ server: "files", tool: "search_files", description: "Search for files and directories matching a pattern." }),
    ];
    const scores = (q: string): Record<string, number> => Object.fromEntries(indexOf(catalogue).search(q).map((m) => [m.entry.namespaced, m.score]));
    const said = scores("search memory for alice");
    const unsaid = scores("search for alice");
    SCORER.serverNameWeight = 0;
    const saidOff = scores("search memory for alice");
    expect(scores("search for alice")).toEqual(unsaid);
    // × 1.2 on the named server's tool, within the rounding of scores; the other server's is unmoved.
    expect(Math.abs((said["memory__search_nodes"] ?? 0) - 1.2 * (saidOff["memory__search_nodes"] ?? 0))).toBeLessThanOrEqual(1);
    expect(said["files__search_files"]).toBe(saidOff["files__search_files"]);
    // A name inside a file name is no mention of the server: "memory.md" is a value. (The file it
    // names implies "file", which does name the files server.)
    SCORER.serverNameWeight = 0.2;
    const inPath = scores("search notes/memory.md for alice");
    SCORER.serverNameWeight = 0;
    const inPathOff = scores("search notes/memory.md for alice");
    expect(inPath["memory__search_nodes"]).toBe(inPathOff["memory__search_nodes"]);
    expect(inPath["files__search_files"]).toBeGreaterThan(inPathOff["files__search_files"] ?? 0);
  });

  it("lifts the siblings of a server's best-matching tool (sibling evidence)", () => {
    // aaa__count_words and zed__count_words carry the same text and the same single hit
    // ("text"); only zed's other tool matches the rest of the task, so zed's tool comes first
    // although "aaa" sorts first by name.
    const idx = indexOf([
      entry({ server: "aaa", tool: "count_words", description: "Count the words of a text." }),
      entry({ server: "zed", tool: "count_words", description: "Count the words of a text." }),
      entry({ server: "zed", tool: "romanize", description: "Transliterate cyrillic glyphs to latin." }),
    ]);
    const ranked = idx.search("transliterate cyrillic text, then count");
    expect(ranked.map((m) => m.entry.namespaced)).toEqual(["zed__romanize", "zed__count_words", "aaa__count_words"]);
    // Sibling evidence adds to the score, never to the matched terms, and never makes a match alone.
    expect(ranked[1]?.matchedTerms).toEqual(ranked[2]?.matchedTerms);
    expect(names(idx, "transliterate")).toEqual(["zed__romanize"]);
  });

  it("cuts a ranking at any limit exactly as the full ranking, with the same total", () => {
    const servers = ["north", "south", "east", "west", "centre"];
    const verbs = ["get", "list", "create", "delete", "search", "update"];
    const nouns = ["file", "issue", "note", "event", "user", "report"];
    const all = servers.flatMap((server, s) =>
      verbs.flatMap((verb, v) =>
        nouns
          .filter((_, n) => (s + v + n) % 3 !== 0)
          .map((noun) => entry({ server, tool: `${verb}_${noun}`, description: `${verb} a ${noun} in the ${server} workspace`, serverDescription: `${server} ${servers[(s + 1) % 5]} tracker` })),
      ),
    );
    const idx = indexOf(all);
    const queries = ["get file", "north__get_file", "south__list_user", "north tracker", "report", "search the south workspace for an issue note", "delete user event east", "workspace"];
    const filters = [undefined, (e: { server: string }) => e.server !== "east"];
    for (const query of queries) {
      for (const filter of filters) {
        const full = idx.rank(query, { limit: Number.POSITIVE_INFINITY, ...(filter ? { filter } : {}) });
        expect(full.total).toBeGreaterThan(0);
        for (const limit of [1, 2, 5, 17]) {
          const cut = idx.rank(query, { limit, ...(filter ? { filter } : {}) });
          expect(cut.total).toBe(full.total);
          expect(cut.matches).toEqual(full.matches.slice(0, limit));
        }
        expect(idx.rank(query, { limit: 0, ...(filter ? { filter } : {}) })).toEqual({ matches: [], total: full.total });
      }
    }
  });
});

