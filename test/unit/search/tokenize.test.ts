import { describe, expect, it } from "vitest";
import { IDENTIFIERS_AS_VALUES, fileReferences, foldText, indexTerms, namesFolder, properNameMentions, properNames, queryTerms, quotedWords, searchTerms, tokenize, words, MAX_QUERY_TERMS } from "../../../src/catalog/search/text/tokenize.js";
import { stem } from "../../../src/catalog/search/text/stem.js";
import { synonymsOf } from "../../../src/catalog/search/text/lexicon.js";
import { wordnet } from "../../../src/catalog/search/text/wordnet.js";
import { entry, indexOf } from "./entries.js";

describe("tokenizer", () => {
  it("splits camelCase, PascalCase acronyms, snake_case and kebab-case", () => {
    expect(words("getUserRepos")).toEqual(["get", "user", "repos"]);
    expect(words("HTTPServerConfig")).toEqual(["http", "server", "config"]);
    expect(words("get_user_repos")).toEqual(["get", "user", "repos"]);
    expect(words("get-user-repos")).toEqual(["get", "user", "repos"]);
    expect(words("server__tool.name/x")).toEqual(["server", "tool", "name", "x"]);
  });

  it("folds diacritics and case", () => {
    expect(foldText("PÁGINA Índice Ñandú über")).toBe("pagina indice nandu uber");
    expect(tokenize("Descargar la PÁGINA")).toEqual(["descargar", "pagina"]);
  });

  it("drops English and Spanish stopwords", () => {
    expect(tokenize("I want to fetch the page for my project")).toEqual(["fetch", "page", "project"]);
    expect(tokenize("quiero que el archivo de los datos")).toEqual(["archivo", "datos"]);
    expect(queryTerms("the of and a")).toEqual([]);
    expect(queryTerms("para que de la")).toEqual([]);
    // "one" as "uno": a pronoun or a numeral ("each one", "one by one"), no capability.
    expect(tokenize("how many bytes each one takes")).toEqual(["many", "bytes", "takes"]);
  });

  it("splits CJK runs into bigrams", () => {
    expect(words("搜索关键词")).toEqual(["搜索", "索关", "关键", "键词"]);
  });

  it("deduplicates query terms by stem, keeps first-seen order and caps at 64", () => {
    expect(queryTerms("files file FILE images").map((t) => t.word)).toEqual(["files", "images"]);
    const many = Array.from({ length: 100 }, (_, i) => `term${i}x`).join(" ");
    expect(queryTerms(many)).toHaveLength(MAX_QUERY_TERMS);
  });
});

describe("stemming", () => {
  it("brings inflected and derived forms to one stem", () => {
    const same = (words: string[]): void => expect(new Set(words.map(stem)).size, words.join(",")).toBe(1);
    same(["create", "created", "creating", "creates", "creation", "creator"]);
    same(["file", "files"]);
    same(["query", "queries"]);
    same(["image", "images"]);
    same(["box", "boxes"]);
    same(["run", "running"]);
    same(["convert", "converter", "converting"]);
    // A suffix that took a silent e or doubled a consonant meets the bare word.
    same(["save", "saved", "saving", "saves"]);
    same(["move", "moved", "moving"]);
    same(["note", "noted", "notes"]);
    same(["add", "added", "adding", "adds"]);
    same(["get", "getting", "gets"]);
    same(["stop", "stopped", "stopping"]);
    // -ence / -ent nouns and adjectives meet their verb.
    same(["different", "difference", "differences", "differ", "diff"]);
    same(["prefer", "prefers", "preference", "preferences"]);
    same(["depend", "dependent", "dependence"]);
  });

  it("keeps apart words that only look alike once a suffix is gone", () => {
    expect(stem("noted")).not.toBe(stem("not"));
    expect(stem("added")).not.toBe(stem("ad"));
    expect(stem("filed")).not.toBe(stem("fil"));
    expect(stem("content")).not.toBe(stem("continue"));
    expect(stem("environment")).toBe(stem("environments"));
  });

  it("leaves short words, plurals-that-are-not and digits alone", () => {
    expect(stem("news")).toBe("news");
    expect(stem("status")).toBe("status");
    expect(stem("analysis")).toBe("analysis");
    expect(stem("mp3")).toBe("mp3");
    expect(stem("get")).toBe("get");
    expect(indexTerms("Running tests")).toEqual([stem("running"), stem("tests")]);
    // A negated word is left out: the text says the tool is for when one does *not* know.
    expect(indexTerms("when you don't know the location")).toEqual([stem("location")]);
  });
});

describe("lexicon", () => {
  it("expands intent verbs and nouns to their synonyms, never to themselves", () => {
    expect(synonymsOf(stem("download"))).toEqual(expect.arrayContaining([stem("fetch"), stem("get"), stem("retrieve")]));
    expect(synonymsOf(stem("delete"))).toContain(stem("remove"));
    expect(synonymsOf(stem("repo"))).toContain(stem("repository"));
    expect(synonymsOf(stem("lookup"))).toEqual(expect.arrayContaining([stem("find"), stem("search"), stem("query")]));
    expect(synonymsOf(stem("create"))).toEqual(expect.arrayContaining([stem("add"), stem("new")]));
    expect(synonymsOf(stem("send"))).toContain(stem("post"));
    expect(synonymsOf(stem("list"))).toContain(stem("enumerate"));
    expect(synonymsOf(stem("descargar"))).toContain(stem("download"));
    expect(synonymsOf(stem("fetch"))).not.toContain(stem("fetch"));
    expect(synonymsOf("zzzz")).toEqual([]);
  });

  it("keeps software vocabulary only: the everyday-capability classes tuned on a benchmark are gone", () => {
    expect(synonymsOf(stem("forget"))).toContain(stem("delete"));
    expect(synonymsOf(stem("trending"))).toEqual([]);
    expect(synonymsOf(stem("remember"))).toEqual([]);
    expect(synonymsOf(stem("nearby"))).toEqual([]);
  });

  it("covers the things tools act on and their file formats", () => {
    expect(synonymsOf(stem("meeting"))).toEqual(expect.arrayContaining([stem("calendar"), stem("event")]));
    expect(synonymsOf(stem("csv"))).toContain(stem("spreadsheet"));
    expect(synonymsOf(stem("pdf"))).toContain(stem("document"));
    expect(synonymsOf(stem("md"))).toContain(stem("markdown"));
  });
});

describe("WordNet derivations", () => {
  it("links a word to its derivations in other parts of speech, from any inflected form", () => {
    expect(wordnet.derivations("translate")).toEqual(expect.arrayContaining(["translation"]));
    expect(wordnet.derivations("translating")).toEqual(expect.arrayContaining(["translation"]));
    expect(wordnet.derivations("delete")).toContain("deletion");
    expect(wordnet.derivations("analysis")).toContain("analyze");
    expect(wordnet.derivations("long")).toContain("length");
    expect(wordnet.derivations("translate")).not.toContain("translate");
    expect(wordnet.derivations("zzzzqx")).toEqual([]);
    expect(wordnet.derivations("ümlaut")).toEqual([]);
  });

  it("a request in one part of speech finds a tool described in another", () => {
    const idx = indexOf([
      entry({ server: "lang", tool: "run", description: "Translation of text between languages." }),
      entry({ server: "other", tool: "run", description: "Runs shell commands." }),
    ]);
    expect(idx.search("translate this paragraph")[0]?.entry.namespaced).toBe("lang__run");
  });
});

describe("names of files are values (searchTerms)", () => {
  const values = (q: string): string[] => searchTerms(q).filter((t) => t.value).map((t) => t.word);
  it("marks a file reference's directory and base-name words, keeps its extension and the added file term", () => {
    const terms = searchTerms("can you relocate server.log to /tmp/old");
    expect(terms.map((t) => t.word)).toEqual(["relocate", "server", "log", "tmp", "old", "file"]);
    expect(values("can you relocate server.log to /tmp/old")).toEqual(["server", "tmp", "old"]);
    expect(values("pull up config.yaml")).toEqual(["config"]);
  });
  it("keeps a word the request also says outside a file reference, and never marks a URL", () => {
    expect(values("read docs/setup.md and the other docs")).toEqual(["setup"]);
    expect(values("send the user to https://example.com/login")).toEqual([]);
    expect(values("list the open issues")).toEqual([]);
    // A slash between words is an alternative, not a path; a path has a root, a trailing
    // separator, three segments or an extension.
    expect(values("Get detailed file/directory metadata; post to Twitter/X")).toEqual([]);
    expect(values("mkdir -p src/components/buttons, then archive/")).toEqual(["src", "components", "buttons", "archive"]);
  });
  it("reads dot-files and a file name before a question mark as file references (eighth round)", () => {
    // A dot-file is a name, never a word: "env" of .env.example is no request for the environment.
    expect(values("what does the .env.example say")).toEqual(["env", "example"]);
    expect(values("peek at ~/.bashrc for me")).toEqual(["bashrc"]);
    expect(values("dump the contents of .eslintrc, .prettierrc and .editorconfig")).toEqual(["eslintrc", "prettierrc", "editorconfig"]);
    // The "file" term came only when the reference was followed by a space or , ; : before.
    const words = (q: string): string[] => searchTerms(q).map((t) => t.word);
    expect(words("can you show me what's in webpack.config.js?")).toContain("file");
    expect(words("what does the .env.example say")).toContain("file");
    // A directory path without a root is a folder to make or list as much as a file's place: no "file".
    expect(words("mkdir -p src/utils/helpers")).not.toContain("file");
    expect(words("are there any subfolders in assets/?")).not.toContain("file");
    expect(words("list C:\\Projects\\invoice-app")).toContain("file");
  });
  it("tells files from directories among the references, one detector for every signal", () => {
    const refs = (q: string): [string, boolean][] => fileReferences(q).map((r) => [r.chunk, r.isFile]);
    expect(refs("move 'notes.txt' to /var/backups/, then read README.md?")).toEqual([
      ["notes.txt", true],
      ["/var/backups/", false],
      ["README.md", true],
    ]);
    expect(refs("what's in report.pdf's metadata")).toEqual([["report.pdf", true]]);
    expect(refs("e.g. and/or Twitter/X, see https://example.com/a.html")).toEqual([]);
  });
  it("a value term reaches no catalogue term: the word in a file name does not match a tool that says it", () => {
    const idx = indexOf([
      entry({ server: "logs", tool: "toggle_logging", description: "Turns server logging on or off." }),
      entry({ server: "files", tool: "move_file", description: "Move or rename a file." }),
    ]);
    expect(idx.search("relocate server.log to /tmp/old")[0]?.entry.namespaced).toBe("files__move_file");
  });
});

describe("snake_case identifiers are values (searchTerms' identifiers)", () => {
  const values = (q: string, isValue?: (id: string) => boolean): string[] => searchTerms(q, isValue).filter((t) => t.value).map((t) => t.word);
  const always = (): boolean => true;
  it("marks an identifier's words when the caller says it is no name of the catalogue's", () => {
    expect(values("give me a recursive tree of the project, skip node_modules", always)).toEqual(["node", "modules"]);
    expect(values("clear the __cache_dir__ folders", always)).toEqual(["cache", "dir"]);
    // The gateway's own server__tool form is a tool's name, known or not: its words stay words.
    expect(values("north__get_file", always)).toEqual([]);
    expect(values("rename the function get_user to fetch_user", always)).toEqual(["get", "user", "fetch"]);
    // Without the predicate (or when it keeps the identifier: a tool's name), the words stay words.
    expect(values("skip node_modules")).toEqual([]);
    expect(values("call read_text_file on it", (id) => id !== "read_text_file")).toEqual([]);
    // Hyphenated words are English compounds, not identifiers; a word said elsewhere stays a word.
    expect(values("a read-only follow-up", always)).toEqual([]);
    expect(values("list the modules, skip node_modules", always)).toEqual(["node"]);
  });
  it("keeps an identifier that is a tool's name a request for that tool, and others out of ranking", () => {
    const idx = indexOf([
      entry({ server: "memory", tool: "open_nodes", description: "Open specific nodes in the knowledge graph by their names." }),
      entry({ server: "files", tool: "search_files", description: "Recursively search for files and directories matching a pattern." }),
    ]);
    const q = "look for **/*.test.ts across the repo, skipping node_modules";
    expect(idx.search(q)[0]?.entry.namespaced).toBe("files__search_files");
    IDENTIFIERS_AS_VALUES.on = false;
    try {
      expect(idx.search(q)[0]?.entry.namespaced).toBe("memory__open_nodes");
    } finally {
      IDENTIFIERS_AS_VALUES.on = true;
    }
    expect(idx.search("run open_nodes for Alice")[0]?.entry.namespaced).toBe("memory__open_nodes");
    // An identifier made of the catalogue's own words is its term written as code: words still.
    const demo = indexOf([
      entry({ server: "demo", tool: "get_resource_links", description: "Returns resource links to example resources." }),
      entry({ server: "demo", tool: "echo", description: "Echoes back the input." }),
    ]);
    expect(demo.rank("my client chokes on resource_link items, send some", { limit: 1, explain: true }).matches[0]?.evidence?.find((e) => e.word === "resource")?.tool).toBe(1);
  });
});

describe("proper names as mentions (properNameMentions)", () => {
  it("joins capitalised words side by side into one name and marks a name that only a list's commas and ands part from the one before", () => {
    expect(properNameMentions("record that Ana works at Acme Corp")).toEqual([
      { words: ["ana"], listed: false, near: false },
      { words: ["acme", "corp"], listed: false, near: true },
    ]);
    expect(properNameMentions("open Apollo, Gemini and Mercury")).toEqual([
      { words: ["apollo"], listed: false, near: false },
      { words: ["gemini"], listed: true, near: true },
      { words: ["mercury"], listed: true, near: true },
    ]);
    // A possessive ends a name: Bob's manager Carol is two people.
    expect(properNameMentions("note that Bob's manager is Carol").map((m) => m.words)).toEqual([["bob"], ["carol"]]);
    // Names in different clauses, or far apart, are not joined by a phrase; a pronoun is no name.
    expect(properNameMentions("Save Marcus as a contact. He's an illustrator I met in Lisbon").map((m) => [m.words.join(" "), m.near])).toEqual([["marcus", false], ["lisbon", false]]);
    expect(properNameMentions("photos of the Kyoto trip - put them under Pictures").map((m) => m.near)).toEqual([false, false]);
  });

  it("reads a sentence's first word as a name only where WordNet lacks it and a finite verb follows (its subject)", () => {
    expect(properNameMentions("Henk works for Bluewave Logistics, link them").map((m) => m.words.join(" "))).toEqual(["henk", "bluewave logistics"]);
    expect(properNameMentions("Jenna is mentoring Carlos").map((m) => [m.words.join(" "), m.near])).toEqual([["jenna", false], ["carlos", true]]);
    // An imperative is followed by its object; a word WordNet knows may be the verb or a noun.
    expect(properNameMentions("Unlink ana from acme corp")).toEqual([]);
    expect(properNameMentions("Check when Priya joined").map((m) => m.words)).toEqual([["priya"]]);
    expect(properNameMentions("Mark is married to Jane").map((m) => m.words)).toEqual([["jane"]]);
    // Not a verb after it: no subject.
    expect(properNameMentions("Henk, Bluewave and me").map((m) => m.words)).toEqual([["bluewave"]]);
  });
});

describe("folders (namesFolder)", () => {
  it("is a path ending in a separator, or one from a root without a file's extension", () => {
    expect(namesFolder("what's in ~/Downloads?")).toBe(true);
    expect(namesFolder("list docs/")).toBe(true);
    expect(namesFolder("show me C:\\Projects\\invoice-app")).toBe(true);
    expect(namesFolder("read ~/notes/todo.md")).toBe(false);
    expect(namesFolder("make src/utils/helpers")).toBe(false);
  });
});

describe("proper names (properNames)", () => {
  it("finds capitalised words that are not a sentence's first, or are possessives, and no acronyms or file names", () => {
    expect(properNames("my sister Anna lives in Lisbon")).toEqual(["anna", "lisbon"]);
    expect(properNames("Mei's birthday is 14 March. Put that on her entry")).toEqual(["mei", "march"]);
    expect(properNames("Open the LICENSE and the README")).toEqual([]);
    expect(properNames("Please read ~/Documents/Notes.md! Then stop")).toEqual([]);
    expect(properNames("link Zoë to \"Project Falcon\"")).toEqual(["zoe", "project", "falcon"]);
    expect(properNames("list the files")).toEqual([]);
  });
  it("takes a sentence's first word for a name when WordNet knows it only as a noun and a finite verb follows", () => {
    // WordNet holds Leo (the constellation), Sarah (the matriarch) and Tom (the tomcat), as nouns only.
    expect(properNames("Leo doesn't report to Dana anymore, drop that link")).toEqual(["leo", "dana"]);
    expect(properNames("Sarah isn't Mike's manager anymore")).toEqual(["sarah", "mike"]);
    expect(properNames("Leo reports to Dana")).toEqual(["leo", "dana"]);
    expect(properNames("Tom works for Globex, record that")).toEqual(["tom", "globex"]);
    // A verb ("Check"), a plural or a word with no finite verb after it stays a word.
    expect(properNames("Check isn't working for Dana")).toEqual(["dana"]);
    expect(properNames("Reports aren't ready for Dana")).toEqual(["dana"]);
    expect(properNames("Leo constellation photos for Dana")).toEqual(["dana"]);
  });
});

describe("quoted words (quotedWords)", () => {
  it("finds what a request quotes, and no apostrophe opens a quote", () => {
    expect([...(quotedWords("fix the typo: line 2 says 'recieve', should be 'receive'") ?? [])]).toEqual(["recieve", "receive"]);
    expect([...(quotedWords('anything in memory about "kubernetes"?') ?? [])]).toEqual(["kubernetes"]);
    expect([...(quotedWords("Pull up the entity called “Project Falcon”") ?? [])]).toEqual(["project", "falcon"]);
    expect(quotedWords("don't delete Mike's notes")).toBeUndefined();
    expect(quotedWords("a 'half open quote")).toBeUndefined();
    expect(searchTerms("echo back 'testing 123'").find((t) => t.word === "testing")?.quoted).toBe(true);
  });
});

describe("arithmetic symbols read as their words (searchTerms)", () => {
  it("adds plus, times, percent for an operator between numbers; a hyphen between digits is no minus", () => {
    expect(searchTerms("what's 1234 + 5678").map((t) => t.word)).toContain("plus");
    expect(searchTerms("3 × 4").map((t) => t.word)).toContain("times");
    expect(searchTerms("what is 15% of 80").map((t) => t.word)).toContain("percent");
    expect(searchTerms("notes for 2024-06-01").map((t) => t.word)).not.toContain("minus");
    expect(searchTerms("add a + b to the list").map((t) => t.word)).not.toContain("plus");
  });
  it("finds the sum tool for a sum written with its symbol", () => {
    const idx = indexOf([
      entry({ server: "calc", tool: "get_sum", description: "Returns the sum of two numbers" }),
      entry({ server: "calc", tool: "echo", description: "Echoes back the input string" }),
    ]);
    expect(idx.search("what's 1234 + 5678")[0]?.entry.namespaced).toBe("calc__get_sum");
  });
});

describe("verb sense-mates of a word the catalogue lacks", () => {
  it("'note' reaches observation through its verb sense {note, observe, mention, remark} only when verbs are asked for", () => {
    expect(wordnet.senseMates("note", true)).toContain("observation");
    expect(wordnet.senseMates("note")).not.toContain("observation");
    const idx = indexOf([
      entry({ server: "kg", tool: "add_observations", description: "Add new observations to existing entities" }),
      entry({ server: "kg", tool: "read_graph", description: "Read the entire knowledge graph" }),
    ]);
    expect(idx.search("note that Bob prefers tea")[0]?.entry.namespaced).toBe("kg__add_observations");
  });
});
