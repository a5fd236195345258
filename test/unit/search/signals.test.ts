// The tool-level ranking signals: action agreement (WordNet verb relations), deprecation, name
// coverage, and pins as tie-breakers. Each test fails when its signal is turned off.
import { afterEach, describe, expect, it } from "vitest";
import { SCORER, SearchIndex } from "../../../src/catalog/search/index.js";
import { ACTION, ActionIndex, isQuestion, queryActions, requestVerbs, toolActions } from "../../../src/catalog/search/signals/action.js";
import { askedAttributes } from "../../../src/catalog/search/signals/attribute.js";
import { readCommands } from "../../../src/catalog/search/text/commands.js";
import { isDeprecated } from "../../../src/catalog/search/signals/deprecated.js";
import { defaultQuantity, requestQuantity, severalPlurals, toolTakesSeveral } from "../../../src/catalog/search/signals/number.js";
import { wordnet } from "../../../src/catalog/search/text/wordnet.js";
import { NEGATION, searchTerms } from "../../../src/catalog/search/text/tokenize.js";
import { entry, indexOf } from "./entries.js";
import { indexEntries, loadExampleCatalog, uniqueEntries } from "../../../bench/bench-data.js";

const names = (idx: SearchIndex, q: string, prefer?: (ns: string) => boolean): string[] =>
  idx.search(q, prefer ? { prefer: (e) => prefer(e.namespaced) } : {}).map((m) => m.entry.namespaced);

/** A server whose routing metadata matches a request while its tools' own text does not. */
function memory(): ReturnType<typeof entry>[] {
  const meta = { server: "memory", serverDescription: "Persistent knowledge graph", useWhen: ["remember facts about people"] };
  return [
    entry({ ...meta, tool: "create_entities", description: "Create multiple new entities in the knowledge graph" }),
    entry({ ...meta, tool: "delete_entities", description: "Delete multiple entities from the knowledge graph" }),
    entry({ ...meta, tool: "read_graph", description: "Read the entire knowledge graph" }),
    entry({ ...meta, tool: "search_nodes", description: "Search for nodes in the knowledge graph based on a query" }),
  ];
}

const saved = { ...SCORER };
const savedAction = { ...ACTION };
afterEach(() => {
  Object.assign(SCORER, saved);
  Object.assign(ACTION, savedAction);
  NEGATION.on = true;
});

describe("action agreement", () => {
  it("reads a negated verb as its antonym, and its word as reaching nothing (don't forget → remember)", () => {
    const acts = queryActions("I prefer dark mode, don't forget");
    const forget = acts.find((a) => a.word === "forget");
    expect(forget?.senses.lemma).toBe("not_forget");
    expect(forget?.senses.synonymWords).toContain("remember");
    expect(queryActions("never delete the backups").find((a) => a.word === "delete")?.senses.lemma).toMatch(/^not_/);
    // "don" of "don't" is no word of the request; the negated word counts and reaches nothing.
    const terms = searchTerms("I prefer dark mode, don't forget");
    expect(terms.map((t) => t.word)).not.toContain("don");
    expect(terms.find((t) => t.word === "forget")?.value).toBe(true);
    // Without it "forget" is a delete word (the lexicon's delete class): the delete tools come first.
    const idx = (): SearchIndex => indexOf(memory());
    expect(names(idx(), "a fact about Alice: she prefers tea, don't forget")[0] ?? "none").not.toMatch(/delete/);
    expect(names(idx(), "a fact about Alice: she prefers tea, don't forget").length).toBeGreaterThan(0);
    NEGATION.on = false;
    expect(names(idx(), "a fact about Alice: she prefers tea, don't forget")[0]).toMatch(/delete/);
  });

  it("reads a verb and its particles as the phrasal verb WordNet lists (look at, look for, get rid of)", () => {
    const lemmas = (q: string): string[] => queryActions(q).map((a) => a.senses.lemma);
    expect(lemmas("look at the screenshot images/bug.jpg")[0]).toBe("look_at");
    expect(lemmas("look for bug.jpg")[0]).toBe("look_for");
    // "look up" → consult, refer: no synonym of the software vocabulary, so "look" (a find word) stands.
    expect(wordnet.phrasalVerbSenses("looked", ["up"], 8)?.senses.lemma).toBe("look_up");
    expect(lemmas("looked up the logs")[0]).toBe("look");
    // The longest form wins, and its particles are no verbs of their own ("rid of" is listed too).
    expect(lemmas("get rid of old.log")).toEqual(["get_rid_of"]);
    // A file name's words are no verbs ("old.log" does not log).
    expect(lemmas("what is in ~/Downloads")).toEqual(["search"]);
    // A verb with no phrasal form stays itself.
    expect(lemmas("read the config")[0]).toBe("read");
    const catalogue = [
      entry({ server: "fs", tool: "search_files", description: "Search for files matching a pattern." }),
      entry({ server: "fs", tool: "read_media_file", description: "Read an image or audio file." }),
    ];
    // "look" alone is a search word (the lexicon's find class); "look at" views.
    expect(names(indexOf(catalogue), "look at the screenshot images/bug.jpg")[0]).toBe("fs__read_media_file");
    expect(names(indexOf(catalogue), "look for bug.jpg")[0]).toBe("fs__search_files");
    // The word "look" of "look at" reaches the catalogue through view and consider, not through
    // its own find class: the search tool holds no evidence for it.
    const lookEvidence = (): number | undefined =>
      indexOf(catalogue)
        .rank("look at the screenshot images/bug.jpg", { limit: 5, explain: true })
        .matches.find((m) => m.entry.tool === "search_files")
        ?.evidence?.find((e) => e.word === "look")?.tool;
    expect(lookEvidence()).toBe(0);
    SCORER.phrasalTerms = false;
    expect(lookEvidence()).toBeGreaterThan(0);
    SCORER.phrasalTerms = true;
    ACTION.phrasal = false;
    expect(lemmas("look at the screenshot images/bug.jpg")[0]).toBe("look");
    expect(names(indexOf(catalogue), "look at the screenshot images/bug.jpg")[0]).toBe("fs__search_files");
  });

  it("reads a question as seeking: among tools matched alike, the one that searches comes first", () => {
    // "know" is a verb of its own (no stopword since the tenth round); the question adds seeking.
    expect(queryActions("who do you know at Acme?").map((a) => a.senses.lemma)).toEqual(["know", "search"]);
    expect(queryActions("read the graph").map((a) => a.senses.lemma)).not.toContain("search");
    // "remember" reaches the memory server's routing text only: its tools tie on it.
    expect(names(indexOf(memory()), "who do you remember at Acme?")[0]).toBe("memory__search_nodes");
    ACTION.questionSeeks = 0;
    expect(names(indexOf(memory()), "who do you remember at Acme?")[0]).not.toBe("memory__search_nodes");
  });

  it("reads a tool's actions from its name and description, and a request's from its verbs", () => {
    expect(toolActions({ tool: "create_entities", description: "Create multiple new entities" })).toEqual(["create"]);
    expect(toolActions({ tool: "write_file", description: "Create a new file or overwrite one" })).toEqual(["write", "create"]);
    expect(toolActions({ tool: "directory_tree", description: "Get a recursive tree view" })).toEqual(["get"]);
    // A light verb whose noun is the name's own action is no action of the tool's.
    expect(toolActions({ tool: "edit_file", description: "Make line-based edits to a text file" })).toEqual(["edit"]);
    expect(toolActions({ tool: "search", description: "Perform a web search" })).toEqual(["search"]);
    expect(toolActions({ tool: "edit_file", description: "Make a copy, then edit it" })).toEqual(["edit", "make"]);
    // The leading verb counts fully; a word after a determiner is a noun ("a list of tasks").
    const acts = queryActions("create a file named TODO.md with a list of tasks");
    expect(acts.map((a) => [a.senses.lemma, a.weight, a.leading])).toEqual([
      ["create", 1, true],
      ["name", 0.5, false],
      ["task", 0.5, false],
    ]);
    // Inflected verbs reach their lemma (morphy)...
    expect(queryActions("deleted files must be restored").map((a) => a.senses.lemma)).toEqual(expect.arrayContaining(["delete", "restore"]));
    // ...but a question's past tense tells what the answer is about, not what to do.
    expect(queryActions("when was it created").map((a) => a.senses.lemma)).toEqual(["search"]);
    expect(queryActions("when was index.html created").map((a) => a.senses.lemma)).not.toContain("create");
    expect(queryActions("can you create the folder?").map((a) => a.senses.lemma)).toEqual(["create"]);
  });

  it("relates verbs through WordNet: synonyms, neighbours and antonyms, and the lexicon's intent classes", () => {
    expect(wordnet.available()).toBe(true);
    const idx = new ActionIndex();
    for (const [i, lemma] of ["delete", "create", "read", "repeat", "add"].entries()) idx.add(i, [lemma]);
    const related = (q: string): Record<string, number> => Object.fromEntries(idx.related(queryActions(q)[0] ?? (() => { throw new Error(q); })()));
    expect(related("erase the record")["delete"]).toBe(1); // WordNet synset {erase, delete}
    expect(related("echo what I say")["repeat"]).toBe(1); // WordNet synset {echo, repeat}
    expect(related("sum these numbers")["add"]).toBe(1); // WordNet synset {sum, add}
    expect(related("remove the entry")["delete"]).toBe(1); // lexicon: one intent
    expect(related("show it")["read"]).toBe(1); // lexicon: read / view / show / open
    expect(related("erase the record")["create"]).toBeUndefined();
  });

  it("tells apart the tools of a server that the request matches only through the server's text", () => {
    const idx = indexOf(memory());
    // No tool's own text holds a word of these requests: only WordNet relates their verbs.
    const requests: [string, string][] = [
      ["cancel what you remember about Zephyr", "memory__delete_entities"],
      ["produce facts to remember about people", "memory__create_entities"],
      ["hunt through what you remember about people", "memory__search_nodes"],
    ];
    // The verbs' own sense-mates (SCORER.unknownVerbMates: "hunt" → search), the nouns of their
    // senses (verbNominalWeight: "hunt" → {search, seek} → search) and the tools' actions their
    // senses hold (actionSynonymWeight) would reach the tools' text: off here, so the only evidence
    // is the server's and the action signal alone decides.
    const plain = (): SearchIndex => indexOf(memory());
    SCORER.unknownVerbMates = false;
    SCORER.verbNominalWeight = 0;
    SCORER.actionSynonymWeight = 0;
    SCORER.actionWeight = 0;
    for (const [q] of requests) expect(new Set(plain().search(q).map((m) => m.score)).size).toBe(1); // all tie on server text
    SCORER.actionWeight = saved.actionWeight;
    const byAction = plain();
    for (const [q, want] of requests) expect(names(byAction, q)[0]).toBe(want);
    SCORER.unknownVerbMates = saved.unknownVerbMates;
    SCORER.verbNominalWeight = saved.verbNominalWeight;
    SCORER.actionSynonymWeight = saved.actionSynonymWeight;
    // With the sense-mates on, the ranking still picks the same tools.
    for (const [q, want] of requests) expect(names(idx, q)[0]).toBe(want);
  });

  it("ranks by the request's verb when siblings share the other words", () => {
    const idx = indexOf(memory());
    expect(names(idx, "create an entity Alice")[0]).toBe("memory__create_entities");
    expect(names(idx, "delete the entity Alice")[0]).toBe("memory__delete_entities");
  });
});

describe("named things (SCORER.namedEntityWeight, properNamesAsValues)", () => {
  /** A files server whose text says nothing of entities beside the memory server above; both servers' texts say "facts". */
  const catalogue = (): SearchIndex =>
    indexOf([
      ...memory(),
      entry({ server: "files", tool: "write_file", description: "Create a new file or overwrite an existing one", serverDescription: "Read and write files of facts and notes" }),
      entry({ server: "files", tool: "read_text_file", description: "Read a text file; head and tail read the first or last lines", serverDescription: "Read and write files of facts and notes" }),
    ]);

  it("a request that names someone and no file finds the server whose text holds entities", () => {
    const q = "a fact: my sister Anna lives in Lisbon";
    expect(names(catalogue(), q)[0]).toMatch(/^memory__/);
    // The implied word is no request word: it is never reported as matched.
    expect(catalogue().search(q).flatMap((m) => m.matchedTerms)).not.toContain("entity");
    SCORER.namedEntityWeight = 0;
    expect(names(catalogue(), q)[0] ?? "none").not.toMatch(/^memory__/);
  });

  it("never makes a match on its own: a request with nothing but a name the catalogue lacks matches nothing", () => {
    expect(names(catalogue(), "weather forecast for Paris tomorrow")).toEqual([]);
    expect(names(catalogue(), "schedule a meeting with Dan on Friday")).toEqual([]);
  });

  it("is server-level evidence: it never orders one server's tools", () => {
    const q = "a fact: Tom works for Globex now";
    const scores = catalogue()
      .search(q)
      .filter((m) => m.entry.server === "memory")
      .map((m) => m.score);
    expect(scores.length).toBe(memory().length);
    expect(new Set(scores).size).toBe(1);
  });

  it("implies nothing for a request that names a file, a name the catalogue holds, or no name", () => {
    SCORER.namedEntityWeight = 100; // so large that it would decide wherever it applied
    expect(names(catalogue(), "show Anna's notes.txt")[0]).toMatch(/^files__/);
    expect(names(catalogue(), "read the Text file")[0]).toMatch(/^files__/);
    expect(names(catalogue(), "overwrite a file")[0]).toMatch(/^files__/);
    // Resolve's evidence never lists it: confidence reads the request's own words only.
    const evidence = catalogue().rank("a fact: my sister Anna lives in Lisbon", { limit: 5, explain: true }).matches[0]?.evidence ?? [];
    expect(evidence.map((e) => e.word)).toEqual(["fact", "sister", "anna", "lives", "lisbon"]);
  });

  it("reads a name the catalogue lacks as a value: no typo or sense-mate of it matches", () => {
    const idx = (): SearchIndex =>
      indexOf([entry({ server: "logs", tool: "tail_log", description: "Show the last lines of a log" }), ...memory()]);
    // To bob is to dock or *tail* (WordNet's verb sense, a sense-mate of a word the catalogue
    // lacks); as a name it reaches nothing.
    expect(names(idx(), "what do you know about Bob?")).not.toContain("logs__tail_log");
    SCORER.properNamesAsValues = false;
    SCORER.namedEntityWeight = 0;
    expect(names(idx(), "what do you know about Bob?")).toContain("logs__tail_log");
  });
});

describe("a verb the catalogue lacks reaching a tool's action (SCORER.actionSynonymWeight)", () => {
  const catalogue = (): SearchIndex =>
    indexOf([
      entry({ server: "everything", tool: "echo", description: "Echoes back the input string", serverDescription: "MCP reference server" }),
      entry({ server: "everything", tool: "get-sum", description: "Returns the sum of two numbers", serverDescription: "MCP reference server" }),
    ]);

  it("finds the tool whose action shares a sense of the request's verb (repeat's fourth sense is echo's)", () => {
    expect(names(catalogue(), "repeat after me: hello there")[0]).toBe("everything__echo");
    SCORER.actionSynonymWeight = 0;
    expect(names(catalogue(), "repeat after me: hello there")).toEqual([]);
  });

  it("reaches only tools' actions, never a noun of their names", () => {
    // "see" has the verb sense {visualize, see, image}: get-tiny-image's name holds the noun, and no action.
    const idx = indexOf([entry({ server: "everything", tool: "get-tiny-image", description: "Returns a tiny MCP logo image" })]);
    SCORER.actionSynonymWeight = 100;
    expect(idx.search("what can you actually see?").map((m) => m.entry.namespaced)).toEqual([]);
  });
});

describe("a noun naming a kind of person (SCORER.personNounWeight)", () => {
  /** A memory server whose text says "person" beside a files server whose text says "facts". */
  const catalogue = (): SearchIndex =>
    indexOf([
      entry({ server: "memory", tool: "search_nodes", description: "Search for nodes in the knowledge graph", serverDescription: "Kept across sessions", useWhen: ["recall what is known about a person"] }),
      entry({ server: "memory", tool: "read_graph", description: "Read the entire knowledge graph", serverDescription: "Kept across sessions", useWhen: ["recall what is known about a person"] }),
      entry({ server: "files", tool: "read_text_file", description: "Read a text file", serverDescription: "Read and write files of facts and notes" }),
      entry({ server: "files", tool: "search_files", description: "Search for files by name", serverDescription: "Read and write files of facts and notes" }),
    ]);

  it("finds the server whose text holds 'person' for a word WordNet files under noun.person", () => {
    expect(wordnet.nounFile("dentists")).toBe(18);
    expect(wordnet.nounFile("restaurant")).not.toBe(18);
    const q = "any facts about my dentist";
    expect(names(catalogue(), q)[0]).toMatch(/^memory__/);
    SCORER.personNounWeight = 0;
    expect(names(catalogue(), q)[0]).toMatch(/^files__/);
  });

  it("is no request word and never a match on its own", () => {
    expect(catalogue().search("any facts about my dentist").flatMap((m) => m.matchedTerms)).not.toContain("person");
    expect(names(catalogue(), "ring my dentist")).toEqual([]);
  });

  it("implies nothing for a noun of another kind", () => {
    SCORER.personNounWeight = 100; // so large that it would decide wherever it applied
    expect(names(catalogue(), "any facts about my restaurant")[0]).toMatch(/^files__/);
  });
});

describe("what names and paths say of the object (SCORER.namedRelationWeight, folderWeight)", () => {
  /** The memory server's relation tools beside the files server's directory tools, and a game server. */
  const catalogue = (): SearchIndex => {
    const meta = { server: "memory", serverDescription: "Knowledge graph of entities, relations and observations", useWhen: ["remember or record facts about people"] };
    const files = { server: "files", serverDescription: "Read, write and list files", useWhen: ["read, write or list files"] };
    return indexOf([
      entry({ ...meta, tool: "create_entities", description: "Create multiple new entities in the knowledge graph" }),
      entry({ ...meta, tool: "create_relations", description: "Create multiple new relations between entities in the knowledge graph" }),
      entry({ ...meta, tool: "add_observations", description: "Add new observations to existing entities in the knowledge graph" }),
      entry({ ...meta, tool: "open_nodes", description: "Open specific nodes in the knowledge graph by their names" }),
      entry({ ...files, tool: "read_text_file", description: "Read the complete contents of a file as text" }),
      entry({ ...files, tool: "get_file_info", description: "Retrieve metadata about a file: size, times, permissions" }),
      entry({ ...files, tool: "list_directory", description: "Get a listing of all files and directories in a path" }),
      entry({ server: "wuwa", tool: "get_character_info", description: "Get a character's profile from the game", serverDescription: "Game data" }),
    ]);
  };

  it("reads two named things, not a list of them, as a relation between them", () => {
    expect(names(catalogue(), "record that Jane is married to Mark")[0]).toBe("memory__create_relations");
    expect(names(catalogue(), "note that Bob is Carol's manager")[0]).toBe("memory__create_relations");
    // A list of names is several things, not two parties: no relation is implied.
    expect(names(catalogue(), "open the memory nodes Apollo and Gemini")[0]).toBe("memory__open_nodes");
    SCORER.namedRelationWeight = 0;
    expect(names(catalogue(), "record that Jane is married to Mark")[0]).not.toBe("memory__create_relations");
  });

  it("orders only the tools of a server the request's own words reach: it never lifts a server on its own", () => {
    // Two names the catalogue lacks; only the game server holds a word of the request ("character").
    expect(names(catalogue(), "tell me about the Wuthering Waves character Jinhsi")[0]).toBe("wuwa__get_character_info");
    // The implied word is no request word: it is never reported as matched.
    expect(catalogue().search("record that Jane is married to Mark").flatMap((m) => m.matchedTerms)).not.toContain("relation");
  });

  it("reads a path from a root without an extension, or one ending in a separator, as a folder", () => {
    expect(names(catalogue(), "what's in ~/Downloads?")[0]).toBe("files__list_directory");
    expect(names(catalogue(), "what's in ~/notes/todo.md?")[0]).not.toBe("files__list_directory");
    SCORER.folderWeight = 0;
    expect(names(catalogue(), "what's in ~/Downloads?")[0]).not.toBe("files__list_directory");
  });

  it("reads an image or audio file's extension as its kind, through the media-type registry (mediaWeight)", () => {
    const idx = (): SearchIndex =>
      indexOf([
        entry({ server: "files", tool: "read_text_file", description: "Read the complete contents of a file as text" }),
        entry({ server: "files", tool: "read_media_file", description: "Read an image or audio file and return it as base64" }),
        entry({ server: "shop", tool: "play_track", description: "Play an audio track", serverDescription: "Music store" }),
      ]);
    expect(names(idx(), "grab ~/Recordings/standup-0412.m4a so we can go through it")[0]).toBe("files__read_media_file");
    expect(names(idx(), "open screenshots/error.png")[0]).toBe("files__read_media_file");
    // The kind orders a server's tools the request reaches; it never brings in the music store alone.
    expect(names(idx(), "grab ~/Recordings/standup-0412.m4a so we can go through it")).not.toContain("shop__play_track");
    // ".ts" is video/mp2t in the registry, not TypeScript: video is no kind; a text file is none either.
    expect(names(idx(), "open src/index.ts")[0]).toBe("files__read_text_file");
    SCORER.mediaWeight = 0;
    expect(names(idx(), "grab ~/Recordings/standup-0412.m4a so we can go through it")[0]).not.toBe("files__read_media_file");
  });
});

describe("what a question asks for, and verbs that tell (askedAttributeWeight, narrativePast)", () => {
  const files = (): SearchIndex =>
    indexOf([
      entry({ server: "files", tool: "get_file_info", description: "Retrieve metadata about a file: size, creation time, permissions" }),
      entry({ server: "files", tool: "create_directory", description: "Create a new directory" }),
      entry({ server: "files", tool: "list_directory", description: "Get a listing of the files in a path" }),
      entry({ server: "files", tool: "write_file", description: "Save a new file or overwrite one" }),
      entry({ server: "files", tool: "search_files", description: "Search for files matching a pattern" }),
    ]);

  it("reads how + adjective as the adjective's WordNet attribute, and when as a time", () => {
    expect(askedAttributes("how big is each thing in build/")).toEqual(["size"]);
    expect(askedAttributes("how old is Rex")).toEqual(["age"]);
    expect(askedAttributes("when was it created")).toEqual(["time"]);
    expect(askedAttributes("open the readme")).toEqual([]);
    expect(names(files(), "check when I created thesis_final_v3.docx")[0]).toBe("files__get_file_info");
    SCORER.askedAttributeWeight = 0;
    expect(names(files(), "check when I created thesis_final_v3.docx")[0]).not.toBe("files__get_file_info");
  });

  it("gives a question no leading verb: its opener takes the imperative's place", () => {
    const lead = (q: string): string | undefined => queryActions(q).find((a) => a.leading)?.word;
    expect(lead("when was report.docx last modified")).toBeUndefined();
    expect(lead("open report.docx")).toBe("open");
    ACTION.questionNoLead = false;
    expect(lead("when was report.docx last modified")).toBe("last");
  });

  it("takes no action, and no name word, from a past tense after its subject", () => {
    expect([...requestVerbs("I saved my resume somewhere, can you find it").told]).toEqual(["saved"]);
    expect([...requestVerbs("when was index.html created?").told]).toEqual(["created"]);
    expect([...requestVerbs("save the notes to notes.md").told]).toEqual([]);
    expect(queryActions("I saved my resume somewhere, can you find it").map((a) => a.senses.lemma)).not.toContain("save");
    ACTION.narrativePast = false;
    expect(queryActions("I saved my resume somewhere, can you find it").map((a) => a.senses.lemma)).toContain("save");
  });
});

describe("the twelfth round: place pro-forms, a question mark, a named object, the nouns of a verb's senses", () => {
  const example = (): SearchIndex => indexEntries(uniqueEntries(loadExampleCatalog()));
  const top = (q: string): string | undefined => names(example(), q)[0];

  it("reads where and the place pro-forms (somewhere, anywhere …) as asking for a location", () => {
    expect(askedAttributes("is there something named invoice_2023* somewhere in ~/Documents?")).toEqual(["location"]);
    expect(askedAttributes("where are all my csvs in ~/data")).toEqual(["location"]);
    expect(askedAttributes("any .env files anywhere in ~/work?")).toEqual(["location"]);
    expect(askedAttributes("list ~/work")).toEqual([]);
    // search_files is the tool "for finding files when you don't know their exact location".
    expect(top("somewhere in ~/work there's a docker-compose.override.yml, can you track it down")).toBe("files__search_files");
    SCORER.askedAttributeWeight = 0;
    expect(top("somewhere in ~/work there's a docker-compose.override.yml, can you track it down")).not.toBe("files__search_files");
  });

  it("takes a request ending in a question mark for a question, unless its last sentence asks for an act", () => {
    expect(isQuestion("anything in memory about kubernetes?")).toBe(true);
    expect(isQuestion("anyone i know who's into rock climbing?")).toBe(true);
    expect(isQuestion("I lost budget_2024.xlsx, can you track it down?")).toBe(false);
    expect(isQuestion("Could you show me the tree of ~/work?")).toBe(false);
    expect(isQuestion("please rename a.txt to b.txt?")).toBe(false);
    expect(isQuestion("anything in memory about kubernetes")).toBe(false);
    expect(top('anything in memory about "kubernetes"?')).toBe("memory__search_nodes");
    ACTION.questionMark = false;
    expect(isQuestion("anything in memory about kubernetes?")).toBe(false);
    expect(top('anything in memory about "kubernetes"?')).not.toBe("memory__search_nodes");
  });

  it("counts a named direct object as an entity (a noun called X, or the name itself)", () => {
    expect(top("we just kicked off a project called Nimbus, make an entry for it")).toBe("memory__create_entities");
    SCORER.namedObject = false;
    expect(top("we just kicked off a project called Nimbus, make an entry for it")).not.toBe("memory__create_entities");
  });

  it("pairs a named object's modifier with what its name says it is (a new person called Carol: a new entity)", () => {
    expect(top("add a new person called Carol to the knowledge graph")).toBe("memory__create_entities");
    expect(top("add a new project called Apollo to the knowledge graph")).toBe("memory__create_entities");
    // A file's name names a file: "a new hello.py" is a new file.
    expect(top("Make me a new hello.py that prints hello world")).toBe("files__write_file");
    SCORER.namedObjectPairs = false;
    expect(top("add a new person called Carol to the knowledge graph")).toBe("memory__add_observations");
    expect(top("Make me a new hello.py that prints hello world")).toBe("files__edit_file");
  });

  it("reaches a tool name's noun through the nouns of the request verb's senses (link → relate → relation)", () => {
    expect(wordnet.verbNominals("link")).toContain("relation");
    expect(wordnet.verbNominals("note")).toContain("observation");
    // One cache, no shared entries: what "long" makes as a verb is not the attribute it measures.
    expect(wordnet.verbNominals("long")).not.toContain("length");
    expect(wordnet.attributesOf("long")).toContain("length");
    expect(wordnet.verbNominals("long")).not.toContain("length");
    // Only the two most frequent senses: note's third, {note, take note, observe}, adds nothing new,
    // and "yoke" (link's fourth sense) is not read.
    expect(wordnet.verbNominals("link")).not.toContain("yoke");
    expect(top("Henk works for Bluewave Logistics, link them")).toBe("memory__create_relations");
    expect(top("link Ana to Acme")).toBe("memory__create_relations");
    // A noun reaches it through its verb: connection → connect → relate → relation.
    expect(top("jules and marcus split up :( take out the married-to connection")).toBe("memory__delete_relations");
    SCORER.verbNominalWeight = 0;
    expect(top("jules and marcus split up :( take out the married-to connection")).not.toBe("memory__delete_relations");
    expect(top("link Ana to Acme")).not.toBe("memory__create_relations");
  });
});

describe("shell commands (SCORER.shellCommands, text/commands.ts)", () => {
  it("reads the command name a request starts with as its manual's description, keeping a name the catalogue holds", () => {
    expect(readCommands("mkdir -p ~/dev/tracker")).toBe("make directories -p ~/dev/tracker");
    expect(readCommands("ls -lS on the assets folder")).toBe("list directory contents -lS on the assets folder");
    expect(readCommands("gzip notes.txt", (w) => w === "gzip")).toBe("gzip compress or expand files notes.txt");
    // Part of a path or a file name is no command; nor is an English word.
    expect(readCommands("open ~/ls/notes.md and .env")).toBe("open ~/ls/notes.md and .env");
    expect(readCommands("sudo mkdir /srv/app")).toBe("sudo make directories /srv/app");
    // A subcommand is its command's: "git diff" is no diff of files.
    expect(readCommands("git diff")).toBe("git diff");
    expect(readCommands("find my cat")).toBe("find my cat");
    const idx = indexOf([
      entry({ server: "files", tool: "create_directory", description: "Create a new directory" }),
      entry({ server: "files", tool: "list_directory", description: "Get a listing of the files in a path" }),
      entry({ server: "files", tool: "move_file", description: "Move or rename a file" }),
    ]);
    expect(names(idx, "mkdir /tmp/scratch")[0]).toBe("files__create_directory");
    SCORER.shellCommands = false;
    expect(names(idx, "mkdir /tmp/scratch")[0]).not.toBe("files__create_directory");
  });
});

describe("boilerplate (a sentence most of a server's tools repeat)", () => {
  const catalogue = (): SearchIndex => {
    const tail = " Only works within allowed directories.";
    return indexOf([
      entry({ server: "files", tool: "read_text_file", description: `Read the complete contents of a file as text.${tail}` }),
      entry({ server: "files", tool: "read_media_file", description: `Read an image or audio file.${tail}` }),
      entry({ server: "files", tool: "write_file", description: `Create a new file or overwrite one.${tail}` }),
      entry({ server: "files", tool: "list_directory", description: `Get a listing of all files in a path.${tail}` }),
      entry({ server: "files", tool: "create_directory", description: "Create a new directory." }),
    ]);
  };

  it("is not a tool's own text: it cannot make siblings hold a word", () => {
    const held = (q: string): string[] => catalogue().search(q).filter((m) => m.matchedTerms.includes("allowed")).map((m) => m.entry.tool);
    expect(held("which allowed paths are there")).toEqual([]);
    SCORER.boilerplate = false;
    expect(held("which allowed paths are there").length).toBe(4);
  });
});

describe("the software vocabulary (text/lexicon.ts)", () => {
  it("reads drop and wipe as delete: \"drop the observation\" is not adding one", () => {
    const meta = { server: "memory", serverDescription: "Knowledge graph" };
    const idx = indexOf([
      entry({ ...meta, tool: "add_observations", description: "Add new observations to existing entities" }),
      entry({ ...meta, tool: "delete_observations", description: "Delete specific observations from entities" }),
    ]);
    expect(names(idx, "drop the observation 'lives in Paris' from Alice")[0]).toBe("memory__delete_observations");
    expect(names(idx, "wipe that observation about Bob")[0]).toBe("memory__delete_observations");
  });

  it("reads record as a thing (an entry), not as write: \"fetch the Acme record\" is no file to write", () => {
    const idx = indexOf([
      entry({ server: "files", tool: "write_file", description: "Create a new file or overwrite an existing one; save text" }),
      entry({ server: "memory", tool: "open_nodes", description: "Open specific nodes of the knowledge graph by name and fetch their record" }),
    ]);
    expect(names(idx, "fetch the Acme Logistics record")[0]).toBe("memory__open_nodes");
    expect(names(idx, "update her record")).not.toContain("files__write_file");
  });
});

describe("a destructive tool the request does not ask for (SCORER.unaskedDestructiveWeight)", () => {
  // The README example config's catalogue: server-memory declares delete_entities destructive.
  const idx = (): SearchIndex => indexEntries(uniqueEntries(loadExampleCatalog()));

  it("does not lead when the request's verb does not ask for its action", () => {
    expect(names(idx(), "export all entities and relations you have")[0]).not.toBe("memory__delete_entities");
    expect(names(idx(), "delete all entities and relations")[0]).toBe("memory__delete_entities");
    SCORER.unaskedDestructiveWeight = 1;
    expect(names(idx(), "export all entities and relations you have")[0]).toBe("memory__delete_entities");
  });
});

describe("negation in a tool's own text", () => {
  it("a word the tool's text negates is no evidence for it (\"when you don't know their location\")", () => {
    const idx = (): SearchIndex =>
      indexOf([
        entry({ server: "files", tool: "search_files", description: "Great for finding files when you don't know their exact location" }),
        entry({ server: "memory", tool: "search_nodes", description: "Search what is known: nodes of the knowledge graph" }),
      ]);
    expect(names(idx(), "what do you know about my dentist?")).not.toContain("files__search_files");
    NEGATION.on = false;
    expect(names(idx(), "what do you know about my dentist?")).toContain("files__search_files");
  });
});

describe("deprecation", () => {
  it("recognises a declaration, not the word", () => {
    expect(isDeprecated({ title: "Read File (Deprecated)", description: "Read a file." })).toBe(true);
    expect(isDeprecated({ description: "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead." })).toBe(true);
    expect(isDeprecated({ description: "This tool is deprecated; use v2." })).toBe(true);
    expect(isDeprecated({ description: "Check if packages are deprecated" })).toBe(false);
    expect(isDeprecated({ description: "List deprecated APIs in a codebase" })).toBe(false);
  });

  it("ranks a deprecated tool below its replacement", () => {
    const idx = indexOf([
      entry({ server: "files", tool: "read_file", title: "Read File (Deprecated)", description: "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead." }),
      entry({ server: "files", tool: "read_text_file", title: "Read Text File", description: "Read the complete contents of a file from the file system as text." }),
    ]);
    expect(names(idx, "read the file notes.txt")).toEqual(["files__read_text_file", "files__read_file"]);
    SCORER.deprecatedWeight = 1;
    expect(names(idx, "read the file notes.txt")[0]).toBe("files__read_file");
    SCORER.deprecatedWeight = saved.deprecatedWeight;
    // Asked for by name, it is still found first.
    expect(names(idx, "files__read_file")[0]).toBe("files__read_file");
  });
});

describe("name coverage", () => {
  it("puts the sibling whose name the request says more of first", () => {
    const idx = indexOf([
      entry({ server: "files", tool: "read_multiple_files", description: "Read the contents of files." }),
      entry({ server: "files", tool: "read_media_file", description: "Read the contents of files." }),
    ]);
    expect(names(idx, "read the media file")[0]).toBe("files__read_media_file");
    SCORER.nameWeight = 0;
    expect(new Set(idx.search("read the contents of files").map((m) => m.score)).size).toBe(1);
  });
});

describe("grammatical number", () => {
  it("tells a request about several things from one about one named file", () => {
    expect(requestQuantity("read these three config files at once: a.yaml, b.yaml and c.yaml")).toBe("several");
    expect(requestQuantity("read both tsconfig.json and package.json")).toBe("several");
    expect(requestQuantity("open src/a.ts and src/b.ts")).toBe("several");
    expect(requestQuantity("show me what's in README.md")).toBe("one");
    expect(requestQuantity("open package.json and show it to me")).toBe("one");
    // Repeating one file is still one; abbreviations and version numbers are no files.
    expect(requestQuantity("diff package.json against package.json")).toBe("one");
    expect(requestQuantity("e.g. the release notes")).toBeUndefined();
    expect(requestQuantity("install version 1.2.3 of node")).toBeUndefined();
    expect(requestQuantity("list the files")).toBeUndefined();
    expect(toolTakesSeveral("read_multiple_files")).toBe(true);
    expect(toolTakesSeveral("batchGetItems")).toBe(true);
    expect(toolTakesSeveral("read_text_file")).toBe(false);
    // "batch" and "bulk" say several in a request as in a name.
    expect(requestQuantity("batch load a list of file paths")).toBe("several");
  });

  it("counts a request that says no number and no plural of what a several tool takes as about one", () => {
    const plurals = new Set(severalPlurals("read_multiple_files"));
    expect([...plurals]).toEqual(["files"]);
    expect(severalPlurals("read_text_file")).toEqual([]);
    expect(defaultQuantity("open /etc/hosts", plurals)).toBe("one");
    expect(defaultQuantity("readme pls", plurals)).toBe("one");
    expect(defaultQuantity("show me the files in src", plurals)).toBeUndefined();
    expect(defaultQuantity("read both a.md and b.md", plurals)).toBe("several");
    const idx = indexOf([
      entry({ server: "files", tool: "read_multiple_files", description: "Read the contents of multiple files at once." }),
      entry({ server: "files", tool: "read_text_file", description: "Read the contents of a file." }),
    ]);
    expect(names(idx, "open /etc/hosts")[0]).toBe("files__read_text_file");
    SCORER.singularDefault = false;
    expect(names(idx, "open /etc/hosts")[0]).toBe("files__read_multiple_files");
  });

  it("puts the sibling that takes several first for a request about several, last for one file", () => {
    const idx = indexOf([
      entry({ server: "files", tool: "read_text_file", description: "Read the contents of files." }),
      entry({ server: "files", tool: "read_multiple_files", description: "Read the contents of files." }),
    ]);
    expect(names(idx, "read both tsconfig.json and package.json")[0]).toBe("files__read_multiple_files");
    expect(names(idx, "read tsconfig.json")[0]).toBe("files__read_text_file");
    // Without the signal nothing tells them apart. (The server-name factor is off too: "files" is
    // said through the file names, and its ×1.2 would carry the names' sub-point difference in
    // coverage past the rounding of scores.)
    SCORER.numberWeight = 0;
    SCORER.serverNameWeight = 0;
    expect(new Set(idx.search("read both tsconfig.json and package.json").map((m) => m.score)).size).toBe(1);
  });
});

describe("pins", () => {
  const catalogue = [
    entry({ server: "a", tool: "fetch_page", description: "Fetch a web page." }),
    entry({ server: "b", tool: "fetch_page", description: "Fetch a web page." }),
    entry({ server: "c", tool: "fetch_url_as_markdown", description: "Fetch a web page as markdown." }),
  ];

  it("break ties and never outrank a better match", () => {
    const idx = indexOf(catalogue);
    expect(names(idx, "fetch page").slice(0, 2)).toEqual(["a__fetch_page", "b__fetch_page"]);
    expect(names(idx, "fetch page", (ns) => ns === "b__fetch_page").slice(0, 2)).toEqual(["b__fetch_page", "a__fetch_page"]);
    // The markdown fetcher is the better match for markdown; a pin on another tool changes nothing.
    expect(names(idx, "fetch page as markdown", (ns) => ns === "b__fetch_page")[0]).toBe("c__fetch_url_as_markdown");
  });

  it("apply in a ranking cut to a limit exactly as in the full ranking", () => {
    const idx = indexOf(catalogue);
    const prefer = (e: { namespaced: string }): boolean => e.namespaced === "b__fetch_page";
    const full = idx.search("fetch page", { prefer }).map((m) => m.entry.namespaced);
    expect(idx.rank("fetch page", { limit: 1, prefer }).matches.map((m) => m.entry.namespaced)).toEqual(full.slice(0, 1));
  });
});

describe("declared effect on a tie", () => {
  // Only the server's use_when holds "remember": every tool ties on server text. What the
  // ranking can still say is which tools declare they do no harm; read-only and additive
  // (destructiveHint: false) are one class, so the writers that would store the fact are not
  // pushed below the readers, and a tool that may destroy comes last.
  const meta = { server: "memory", serverDescription: "Persistent knowledge graph", useWhen: ["remember facts about people"] };
  const withEffect = (tool: string, annotations: Record<string, boolean> | undefined) => ({ ...entry({ ...meta, tool, description: "Works on the knowledge graph" }), ...(annotations ? { annotations } : {}) });
  const catalogue = [
    withEffect("add_observations", { readOnlyHint: false, destructiveHint: false }),
    withEffect("delete_entities", { readOnlyHint: false, destructiveHint: true }),
    withEffect("clear_graph", undefined),
    withEffect("open_nodes", { readOnlyHint: true }),
    withEffect("create_entities", { readOnlyHint: false, destructiveHint: false }),
  ];

  it("orders the tools that do no harm (read-only or additive) by name before those that may destroy", () => {
    const idx = indexOf(catalogue);
    expect(names(idx, "remember that Alice prefers tea")).toEqual([
      "memory__add_observations",
      "memory__create_entities",
      "memory__open_nodes",
      "memory__clear_graph",
      "memory__delete_entities",
    ]);
  });

  it("puts the readers first when the request is a question, and says which requests are", () => {
    const idx = indexOf(catalogue);
    expect(names(idx, "what do you remember about Alice")).toEqual([
      "memory__open_nodes",
      "memory__add_observations",
      "memory__create_entities",
      "memory__clear_graph",
      "memory__delete_entities",
    ]);
    expect(["what do you know", "is there a file called .env?", "did I tell you my favourite colour", "How many"].map(isQuestion)).toEqual([true, true, true, true]);
    // Modals open polite requests to act; a "that" clause is a statement.
    expect(["can you read docs/setup.md", "remember that Alice prefers tea", "what's 40 plus 2"].map(isQuestion)).toEqual([false, false, true]);
  });
});

describe("term proximity", () => {
  const files = (): SearchIndex =>
    indexOf([
      entry({ server: "files", tool: "get_file_info", description: "Retrieve detailed metadata about a file: size, creation time, last modified time and permissions." }),
      entry({ server: "files", tool: "edit_file", description: "Make line-based edits to a text file; modified lines are replaced with new content." }),
    ]);
  it("ranks first the tool whose own text says the request's adjacent words adjacently", () => {
    const q = "when was report.docx last modified";
    SCORER.pairWeight = 0;
    const without = files().search(q).map((m) => m.score);
    SCORER.pairWeight = saved.pairWeight;
    const idx = files();
    expect(idx.search(q)[0]?.entry.namespaced).toBe("files__get_file_info");
    const with_ = idx.search(q);
    expect((with_[0]?.score ?? 0) / (with_[1]?.score ?? 1)).toBeGreaterThan((without[0] ?? 0) / (without[1] ?? 1));
  });
  it("never pairs the leading verb: a verb next to an adjective says nothing about the object", () => {
    const idx = indexOf([
      entry({ server: "kg", tool: "add_observations", description: "Add new observations to existing entities" }),
      entry({ server: "kg", tool: "create_entities", description: "Create multiple new entities" }),
    ]);
    SCORER.pairWeight = 0;
    const before = indexOf([
      entry({ server: "kg", tool: "add_observations", description: "Add new observations to existing entities" }),
      entry({ server: "kg", tool: "create_entities", description: "Create multiple new entities" }),
    ]).search("add new person Carol").map((m) => [m.entry.namespaced, m.score]);
    SCORER.pairWeight = saved.pairWeight;
    expect(idx.search("add new person Carol").map((m) => [m.entry.namespaced, m.score])).toEqual(before);
  });
});
