// Issue 23, every case under "Why", through a real gateway on the README's example config
// (everything, memory, files) and a real SDK client: what a model meets in the lazy loop
// (resolve → describe → call) must be right, small, sendable and honest about servers that
// cannot serve.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doc, FIXTURES, startGateway, tempHome, text, waitReady, type GatewayClient, type TempHome } from "../helpers/gateway.js";
import { exampleConfig, exampleConfigObject, exampleSandboxed } from "../helpers/example.js";
import { checkResolveContract } from "../helpers/resolve-contract.js";

type Doc = Record<string, unknown>;
interface Rec {
  server: string;
  tool: string;
  namespaced: string;
  required_fields: string[];
  argument_template: Record<string, unknown>;
  optional_fields?: string[];
}

async function resolve(gw: GatewayClient, query: string): Promise<Doc> {
  const r = await gw.call("mcphub_resolve_tool", { query });
  expect(r.isError).toBeFalsy();
  const d = doc(r);
  expect(checkResolveContract(d)).toEqual([]);
  // Text and structured content say the same: the one document, compact.
  expect(text(r)).toBe(JSON.stringify(r.structuredContent));
  return d;
}

/** A template with its string placeholders filled in (what a model does before call_tool). */
function fill(value: unknown, values: Record<string, unknown>): unknown {
  if (typeof value === "string" && /^<.*>$/.test(value)) return values[value.slice(1, -1)] ?? value;
  if (Array.isArray(value)) return value.map((v) => fill(v, values));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, values)]));
  return value;
}

describe("the lazy loop on the example config", () => {
  let home: TempHome;
  let gw: GatewayClient;
  beforeAll(async () => {
    home = tempHome("mcphub-lazy-loop-");
    gw = await startGateway(home, exampleConfig(home, { sandboxed: await exampleSandboxed() }));
    await waitReady(gw, ["everything", "memory", "files"]);
  });
  afterAll(async () => {
    await gw?.close();
    home?.cleanup();
  });

  it("create an entity Alice with the observation prefers tea: create_entities, and its template is sendable as filled", async () => {
    const d = await resolve(gw, "create an entity Alice with the observation prefers tea");
    const rec = d.recommendation as Rec;
    expect(rec.namespaced).toBe("memory__create_entities");
    expect(rec.argument_template).toEqual({ entities: [{ name: "<name>", entityType: "<entityType>", observations: ["<observation>"] }] });
    const args = fill(rec.argument_template, { name: "Alice", entityType: "person", observation: "prefers tea" }) as Record<string, unknown>;
    const called = await gw.call("mcphub_call_tool", { tool: rec.namespaced, arguments: args });
    expect(called.isError).toBeFalsy();
    const graph = doc(await gw.call("mcphub_call_tool", { tool: "memory__read_graph" }));
    expect(JSON.stringify(graph)).toContain("prefers tea");
  });

  it("remember that Alice prefers tea: no destructive tool leads a tie on server text, and resolve says it is a tie", async () => {
    // Only the memory server's use_when holds these words; no tool's own text does, so what the
    // ranking can still say is which tools do the least harm (their MCP annotations).
    const d = await resolve(gw, "remember that Alice prefers tea");
    expect(d.status).not.toBe("confident");
    expect((d.recommendation as Rec).server).toBe("memory");
    const search = doc(await gw.call("mcphub_search_tools", { query: "remember that Alice prefers tea", max_hits: 9 }));
    const memory = (search.matches as { namespaced: string; score: number; effect: string }[]).filter((m) => m.namespaced.startsWith("memory__"));
    const firstDestructive = memory.findIndex((m) => m.effect === "destructive");
    expect(memory.slice(0, firstDestructive).every((m) => m.effect !== "destructive")).toBe(true);
    expect(firstDestructive).toBeGreaterThan(0);
    expect(memory[0]?.namespaced).not.toMatch(/delete/);
    // With a word of its own, the tool that does it leads: create / add, not a tie.
    const own = doc(await gw.call("mcphub_search_tools", { query: "remember that Alice prefers tea: add it as an observation", max_hits: 3 }));
    expect((own.matches as { namespaced: string }[])[0]?.namespaced).toBe("memory__add_observations");
  });

  it("record that Jane is married to Mark: the relation between two named things, stored as sent; a folder's path lists it", async () => {
    const d = await resolve(gw, "record that Jane is married to Mark");
    const rec = d.recommendation as Rec;
    expect(rec.namespaced).toBe("memory__create_relations");
    await gw.call("mcphub_call_tool", { tool: "memory__create_entities", arguments: { entities: [{ name: "Jane", entityType: "person", observations: [] }, { name: "Mark", entityType: "person", observations: [] }] } });
    const args = fill(rec.argument_template, { from: "Jane", to: "Mark", relationType: "is married to" }) as Record<string, unknown>;
    const called = await gw.call("mcphub_call_tool", { tool: rec.namespaced, arguments: args });
    expect(called.isError).toBeFalsy();
    expect(JSON.stringify(doc(await gw.call("mcphub_call_tool", { tool: "memory__read_graph" })))).toContain("is married to");
    // A list of names is not a relation; a path from a root without an extension is a folder.
    expect(((await resolve(gw, "open the memory nodes Apollo and Gemini")).recommendation as Rec).namespaced).toBe("memory__open_nodes");
    expect(((await resolve(gw, "what's in ~/Downloads?")).recommendation as Rec).namespaced).toMatch(/^files__list_directory/);
  });

  it("what the words say beyond themselves: a shell command, a file's media type, what a question asks for, a verb's sense", async () => {
    const top = async (q: string): Promise<string> => ((await resolve(gw, q)).recommendation as Rec).namespaced;
    // "mkdir" reads as its manual's line (make directories).
    expect(await top("mkdir scratch-e2e")).toBe("files__create_directory");
    // An .m4a is audio (the media-type registry): the tool that reads audio, not the text reader.
    expect(await top("there's a voice memo at ~/Recordings/standup-0412.m4a, can you grab it")).toBe("files__read_media_file");
    // "how big" asks for a size (WordNet: big → size); "when" for a time, and "I created" tells, it does not ask to create.
    expect(await top("how big is each file in ~/Downloads")).toBe("files__list_directory_with_sizes");
    expect(await top("check when I created thesis_final_v3.docx")).toBe("files__get_file_info");
    // "somewhere" asks where, as a question does (search_files is for files whose location you don't know);
    // a request ending in "?" asks to learn (the readers first); "link them" relates (link → relate → relation).
    expect(await top("somewhere in ~/work there's a docker-compose.override.yml, can you track it down")).toBe("files__search_files");
    expect(await top('anything in memory about "kubernetes"?')).toBe("memory__search_nodes");
    expect(await top("Henk works for Bluewave Logistics, link them")).toBe("memory__create_relations");
  });

  it("open package.json and show it to me: read_text_file, and the deprecated read_file below it", async () => {
    const d = await resolve(gw, "open package.json and show it to me");
    expect((d.recommendation as Rec).namespaced).toBe("files__read_text_file");
    const search = doc(await gw.call("mcphub_search_tools", { query: "read the file package.json" }));
    const names = (search.matches as { namespaced: string }[]).map((m) => m.namespaced);
    expect(names[0]).toBe("files__read_text_file");
    expect(names.indexOf("files__read_file")).toBeGreaterThan(names.indexOf("files__read_text_file"));
  });

  it("templates: optional fields left out (never null), arrays as arrays, and the filled template is accepted", async () => {
    writeFileSync(join(home.dir, "notes.txt"), "line one\nline two\n");
    const read = (await resolve(gw, "read the contents of notes.txt")).recommendation as Rec;
    expect(read.namespaced).toBe("files__read_text_file");
    expect(read.argument_template).toEqual({ path: "<path>" });
    expect(read.optional_fields).toEqual(["head", "tail"]);
    const got = await gw.call("mcphub_call_tool", { tool: read.namespaced, arguments: fill(read.argument_template, { path: join(home.dir, "notes.txt") }) as Record<string, unknown> });
    expect(got.isError).toBeFalsy();
    expect(text(got)).toContain("line two");
    // add_observations wants an array of {entityName, contents[]}: the template has that shape.
    const add = (await resolve(gw, "add the observation likes jazz to Alice")).recommendation as Rec;
    expect(add.namespaced).toBe("memory__add_observations");
    expect(add.argument_template).toEqual({ observations: [{ entityName: "<entityName>", contents: ["<content>"] }] });
    const added = await gw.call("mcphub_call_tool", { tool: add.namespaced, arguments: fill(add.argument_template, { entityName: "Alice", content: "likes jazz" }) as Record<string, unknown> });
    expect(added.isError).toBeFalsy();
    expect(text(added)).not.toMatch(/invalid_arguments|not found/);
  });

  it("answers are compact: server fields once per server, descriptions cut at a sentence, hints in both copies", async () => {
    const d = await resolve(gw, "list the files in the src directory");
    const raw = JSON.stringify(d);
    expect(raw).not.toMatch(/\n/);
    for (const alt of d.alternatives as Doc[]) {
      for (const key of ["server_description", "use_when", "tags", "server", "tool"]) expect(alt[key]).toBeUndefined();
    }
    expect((d.servers as Record<string, Doc>)["files"]).toEqual({ description: "Read, write, search and list files in the working directory" });
    expect(raw.split("Read, write, search and list files in the working directory")).toHaveLength(2);
    expect(Buffer.byteLength(raw)).toBeLessThan(1500);
    const s = await gw.call("mcphub_search_tools", { query: "list the files in the src directory", max_hits: 5 });
    expect(Buffer.byteLength(text(s))).toBeLessThan(2000);
    expect(text(s)).toBe(JSON.stringify(s.structuredContent));
    expect(doc(s).hint).toMatch(/describe_tool/);
  });

  it("describe_tool takes call_tool's name forms: the name alias, a bare unique name; an unknown name gets a did-you-mean and isError", async () => {
    const byAlias = doc(await gw.call("mcphub_describe_tool", { name: "files__read_text_file" }));
    expect(byAlias.namespaced).toBe("files__read_text_file");
    const bare = doc(await gw.call("mcphub_describe_tool", { tool: "read_text_file" }));
    expect(bare).toMatchObject({ namespaced: "files__read_text_file", input_schema: expect.any(Object) });
    const callBare = await gw.call("mcphub_call_tool", { tool: "echo", arguments: { message: "bare" } });
    expect(text(callBare)).toContain("bare");
    const typo = await gw.call("mcphub_describe_tool", { tool: "files__read_txt_file" });
    expect(typo.isError).toBe(true);
    expect(text(typo)).toMatch(/did you mean files__read_text_file/);
    const unknown = await gw.call("mcphub_describe_tool", { tool: "read_txt_file" });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/did you mean files__read_text_file/);
    const noQuery = await gw.call("mcphub_resolve_tool", {});
    expect(noQuery.isError).toBe(true);
    expect(text(noQuery)).toMatch(/invalid params: `query` is required/);
  });

  it("get_result's next step is in structuredContent as well as in the text", async () => {
    writeFileSync(join(home.dir, "big.txt"), `${"a line of text that repeats\n".repeat(2000)}`);
    const receipt = await gw.call("mcphub_call_tool", { tool: "files__read_text_file", arguments: { path: join(home.dir, "big.txt") } });
    const r = doc(receipt);
    expect(r).toMatchObject({ status: "stored" });
    expect(String(r.nextAction)).toMatch(/get_result/);
    const page = await gw.call("mcphub_get_result", { callId: r.callId });
    expect(text(page)).toMatch(/format: "text"/);
    expect(String((page.structuredContent as Doc).hint)).toMatch(/format: "text"/);
  });

  it("no dead ends: a request nothing serves carries each server's one-line capability", async () => {
    const d = await resolve(gw, "weather forecast for Paris");
    expect(d.status).not.toBe("confident");
    const described = { ...((d.servers as Doc | undefined) ?? {}), ...((d.capabilities as Doc | undefined) ?? {}) };
    expect(Object.keys(described).sort()).toEqual(["everything", "files", "memory"]);
  });
});

describe("failure-aware routing", () => {
  let home: TempHome;
  let gw: GatewayClient;
  let configPath: string;
  beforeAll(async () => {
    home = tempHome("mcphub-lazy-down-");
    const config = exampleConfigObject(home, { sandboxed: await exampleSandboxed() });
    // files without any routing metadata: its summary is derived from its tools.
    const files = config.servers["files"] as Record<string, unknown>;
    for (const key of ["description", "tags", "use_when"]) delete files[key];
    config.servers["weather"] = {
      command: process.execPath,
      args: [join(FIXTURES, "fail-start.mjs")],
      description: "Weather forecasts and current conditions for any city",
      use_when: ["weather forecast for a city"],
    };
    configPath = home.writeConfig(config);
    // A first run lists everything and caches it; the second runs with everything disabled.
    const first = await startGateway(home, configPath);
    await waitReady(first, ["everything", "memory", "files"]);
    await first.close();
    (config.servers["everything"] as Record<string, unknown>)["enabled"] = false;
    configPath = home.writeConfig(config);
    gw = await startGateway(home, configPath);
    await waitReady(gw, ["memory", "files"]);
    // The weather server has failed once it has tried to start.
    for (let i = 0; i < 600; i++) {
      const servers = doc(await gw.call("mcphub_list_servers")).servers as { name: string; state: string }[];
      if (servers.find((s) => s.name === "weather")?.state === "failed") break;
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  afterAll(async () => {
    await gw?.close();
    home?.cleanup();
  });

  it("weather forecast for Paris with a failed weather server: says the weather server is down and how to fix it", async () => {
    const d = await resolve(gw, "weather forecast for Paris tomorrow");
    expect(d.status).not.toBe("confident");
    expect(d.reason_codes).toContain("server_unavailable");
    const down = (d.unavailable as Doc[]).find((u) => u.server === "weather");
    expect(down).toMatchObject({ server: "weather", state: "failed", fix: expect.stringMatching(/mcphub .*doctor --server weather/) });
    expect(String(down?.reason)).toContain("/srv/missing/settings.json");
    expect(String(d.hint)).toMatch(/server weather is failed; fix: run `mcphub .*doctor --server weather`/);
    expect(String(d.hint)).not.toMatch(/rephrase/);
    const s = doc(await gw.call("mcphub_search_tools", { query: "weather forecast for Paris tomorrow" }));
    expect((s.unavailable as Doc[]).map((u) => u.server)).toContain("weather");
  });

  it("a disabled server's tools stay findable, marked disabled, with the command that enables it; never confident", async () => {
    const d = await resolve(gw, "echo hello back to me");
    expect(d.status).not.toBe("confident");
    const down = (d.unavailable as Doc[]).find((u) => u.server === "everything");
    expect(down).toMatchObject({ state: "disabled", fix: expect.stringContaining("enable everything"), tools: expect.arrayContaining(["everything__echo"]) });
    const s = doc(await gw.call("mcphub_search_tools", { query: "echo hello back to me" }));
    expect((s.matches as { namespaced: string }[]).map((m) => m.namespaced)).toContain("everything__echo");
    expect((s.servers as Record<string, Doc>)["everything"]).toMatchObject({ state: "disabled", fix: expect.stringContaining("enable everything") });
  });

  it("a server without a description is summarised from its tools, in the instructions and in answers", async () => {
    const instructions = gw.client.getInstructions() ?? "";
    expect(instructions).toMatch(/files: tools: create directory, directory tree, edit file/);
    const d = await resolve(gw, "book a flight to Rome");
    expect(JSON.stringify(d.capabilities ?? {})).toMatch(/"files":"tools: create directory, directory tree/);
  });
});
