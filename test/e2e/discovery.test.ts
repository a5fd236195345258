// Discovery end to end with a real client and the real server-memory: resolve a natural-language
// goal, describe the recommendation, call it with the template filled, and read the fact back.
// Every resolve response is checked against local-agent's contract rules. Also: pins and the
// schema budget as a harness sees them, byte-identical across gateway runs.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doc, EVERYTHING, MEMORY, startGateway, tempHome, text, waitReady, type TempHome } from "../helpers/gateway.js";
import { checkResolveContract } from "../helpers/resolve-contract.js";

const node = process.execPath;

describe("resolve → describe → call → read back", () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome();
  });
  afterAll(() => home?.cleanup());

  it("remembers that Alice works at Acme through the recommended memory tool", async () => {
    const cfg = home.writeConfig({
      expose: "lazy",
      servers: {
        memory: {
          command: node,
          args: [MEMORY],
          env: { MEMORY_FILE_PATH: join(home.dir, "memory.jsonl") },
          description: "knowledge graph memory",
          use_when: ["remember facts about people, organisations and projects across sessions"],
        },
        everything: { command: node, args: [EVERYTHING, "stdio"], description: "MCP feature demo server" },
      },
    });
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["memory", "everything"]);
      const listed = doc(await gw.call("mcphub_list_servers"));
      const resolved = doc(await gw.call("mcphub_resolve_tool", { query: "remember that Alice works at Acme" }));
      expect(checkResolveContract(resolved)).toEqual([]);
      expect(resolved.catalog_revision).toBe(listed.catalog_revision);
      const rec = resolved.recommendation as {
        server: string;
        tool: string;
        namespaced: string;
        required_fields: string[];
        argument_template: Record<string, unknown>;
      };
      expect(rec.server).toBe("memory");
      // Two named things: an entity with an observation, or the relation between them (tenth round).
      expect(["create_entities", "add_observations", "create_relations"]).toContain(rec.tool);
      expect(rec.namespaced).toBe(`memory__${rec.tool}`);
      expect(Object.keys(rec.argument_template)).toEqual(expect.arrayContaining(rec.required_fields));

      const described = doc(await gw.call("mcphub_describe_tool", { tool: rec.namespaced }));
      expect(described.catalog_revision).toBe(listed.catalog_revision);
      expect(described.input_schema).toMatchObject({ type: "object" });

      // Fill the template the way a model would, from the described schema.
      const args =
        rec.tool === "create_entities"
          ? { entities: [{ name: "Alice", entityType: "person", observations: ["works at Acme"] }] }
          : rec.tool === "create_relations"
            ? { relations: [{ from: "Alice", to: "Acme", relationType: "works at Acme" }] }
            : { observations: [{ entityName: "Alice", contents: ["works at Acme"] }] };
      for (const field of rec.required_fields) expect(args).toHaveProperty(field);
      if (rec.tool !== "create_entities") {
        // Observations and relations are of entities that exist: a model makes them first.
        const entities = [{ name: "Alice", entityType: "person", observations: [] }, ...(rec.tool === "create_relations" ? [{ name: "Acme", entityType: "organisation", observations: [] }] : [])];
        await gw.call("mcphub_call_tool", { tool: "memory__create_entities", arguments: { entities } });
      }
      const called = await gw.call("mcphub_call_tool", { tool: rec.namespaced, arguments: args });
      expect(called.isError).toBeFalsy();

      const back = doc(await gw.call("mcphub_resolve_tool", { query: "look up what we know about Alice" }));
      expect(checkResolveContract(back)).toEqual([]);
      const found = await gw.call("mcphub_call_tool", { tool: "memory__search_nodes", arguments: { query: "Alice" } });
      expect(text(found)).toContain("works at Acme");

      // Search, describe and resolve agree on the revision; an exact name comes first.
      const search = doc(await gw.call("mcphub_search_tools", { query: "memory__search_nodes" }));
      expect((search.matches as { namespaced: string }[])[0]?.namespaced).toBe("memory__search_nodes");
      expect(search.catalog_revision).toBe(listed.catalog_revision);
      const generic = doc(await gw.call("mcphub_resolve_tool", { query: "the and of" }));
      expect(checkResolveContract(generic)).toEqual([]);
      expect(generic.status).toBe("no_match");
      // An oversized query is cut to 2048 bytes (said in reason_codes), never refused.
      const huge = doc(await gw.call("mcphub_search_tools", { query: `secret-${"x".repeat(3000)}` }));
      expect(huge.reason_codes).toEqual(["query_truncated"]);
      expect(Buffer.byteLength(String(huge.query))).toBeLessThanOrEqual(2048);
    } finally {
      await gw.close();
    }
  });

  it("answers every query with the contract, guides weak matches, and forgives call_tool's `name`", async () => {
    const cfg = home.writeConfig(
      {
        expose: "lazy",
        servers: {
          memory: {
            command: node,
            args: [MEMORY],
            env: { MEMORY_FILE_PATH: join(home.dir, "robust.jsonl") },
            use_when: ["remember facts about people, organisations and projects"],
          },
          everything: { command: node, args: [EVERYTHING, "stdio"], description: "MCP feature demo server" },
        },
      },
      "robust.yaml",
    );
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["memory", "everything"]);
      const base64 = Buffer.from(Array.from({ length: 15000 }, (_, i) => (i * 131) % 256)).toString("base64");
      for (const args of [{ query: "" }, { query: base64 }, { query: "\u0000\u0007echo\u001b\u007f" }, { query: "记住爱丽丝在Acme工作" }, { query: "запомни это" }]) {
        const r = await gw.call("mcphub_resolve_tool", args);
        expect(r.isError).toBeFalsy();
        expect(checkResolveContract(doc(r))).toEqual([]);
        const sr = await gw.call("mcphub_search_tools", args);
        expect(sr.isError).toBeFalsy();
        expect(doc(sr)).toMatchObject({ contract_version: 1 });
      }
      // No query at all is the caller's mistake: an invalid-params error that says what to send.
      const missing = await gw.call("mcphub_resolve_tool", {});
      expect(missing.isError).toBe(true);
      expect(text(missing)).toMatch(/invalid params: `query` is required/);
      expect(doc(await gw.call("mcphub_search_tools", {}))).toMatchObject({ contract_version: 1 });
      expect(doc(await gw.call("mcphub_resolve_tool", { query: base64 })).reason_codes).toContain("query_truncated");

      // A request nothing here serves: weak, said so, with the servers' capabilities to reformulate.
      const weak = doc(await gw.call("mcphub_resolve_tool", { query: "book a flight to Rome for next Tuesday" }));
      expect(checkResolveContract(weak)).toEqual([]);
      expect(weak.status).not.toBe("confident");
      // Each server is described once: in `servers` when it has a match here, else in `capabilities`.
      const described = (d: Record<string, unknown>, server: string): string =>
        JSON.stringify((d.servers as Record<string, unknown> | undefined)?.[server] ?? (d.capabilities as Record<string, unknown> | undefined)?.[server] ?? "");
      expect(described(weak, "memory")).toContain("remember facts about people");
      expect(described(weak, "everything")).toContain("MCP feature demo server");
      const weakSearch = doc(await gw.call("mcphub_search_tools", { query: "book a flight to Rome for next Tuesday" }));
      expect(weakSearch.weak_match).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(weakSearch.capabilities ?? {}))).toBeLessThanOrEqual(1024);
      const strong = doc(await gw.call("mcphub_search_tools", { query: "echo a message back" }));
      expect(strong.weak_match).toBeUndefined();
      expect(strong.capabilities).toBeUndefined();

      // `name` (MCP's own field) is an alias of `tool`; another unknown key says what to use.
      const byName = await gw.call("mcphub_call_tool", { name: "everything__echo", arguments: { message: "via name" } });
      expect(byName.isError).toBeFalsy();
      expect(text(byName)).toContain("via name");
      const wrong = await gw.call("mcphub_call_tool", { tool_name: "everything__echo", arguments: { message: "x" } });
      expect(wrong.isError).toBe(true);
      expect(text(wrong)).toContain("unknown key `tool_name`; use `tool`");
    } finally {
      await gw.close();
    }
  });

  it("expose all: the instructions carry the capability families and descriptions lead with the tool's purpose", async () => {
    const cfg = home.writeConfig(
      {
        expose: "all",
        servers: {
          memory: {
            command: node,
            args: [MEMORY],
            env: { MEMORY_FILE_PATH: join(home.dir, "all.jsonl") },
            use_when: ["remember facts about people"],
            tool_use_when: { search_nodes: ["find what was stored about someone"] },
          },
        },
      },
      "all-instr.yaml",
    );
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["memory"]);
      const instructions = gw.client.getInstructions() ?? "";
      expect(Buffer.byteLength(instructions)).toBeLessThan(4096);
      expect(instructions).toContain("memory: remember facts about people");
      const { tools } = await gw.client.listTools();
      const search = tools.find((t) => t.name === "memory__search_nodes");
      expect(search?.description).toMatch(/^Use when: find what was stored about someone\. Search for nodes/);
      expect(search?.description?.endsWith("[memory]")).toBe(true);
    } finally {
      await gw.close();
    }
  });

  it("lazy-mode instructions name the workflow and stay under 4 KiB", async () => {
    const cfg = home.writeConfig(
      { expose: "lazy", servers: { memory: { command: node, args: [MEMORY], use_when: ["remember facts about people"] } } },
      "instr.yaml",
    );
    const gw = await startGateway(home, cfg);
    try {
      const instructions = gw.client.getInstructions() ?? "";
      expect(Buffer.byteLength(instructions)).toBeLessThan(4096);
      expect(instructions).toContain("mcphub_resolve_tool");
      expect(instructions).toMatch(/ambiguous/i);
      expect(instructions).toContain("remember facts about people");
    } finally {
      await gw.close();
    }
  });
});

describe("advertisement as a harness sees it", () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome();
  });
  afterAll(() => home?.cleanup());

  const servers = () => ({
    ev: { command: node, args: [EVERYTHING, "stdio"] },
    memory: { command: node, args: [MEMORY], env: { MEMORY_FILE_PATH: join(home.dir, "m.jsonl") } },
  });

  it("pin: [] with budget 0 lists exactly the eight management tools", async () => {
    const cfg = home.writeConfig(
      { expose: "lazy", pin: ["ev"], servers: servers(), agents: { tiny: { pin: [], tool_schema_budget: 0 } } },
      "tiny.yaml",
    );
    const gw = await startGateway(home, cfg, { agent: "tiny" });
    try {
      await waitReady(gw, ["ev", "memory"]);
      const { tools } = await gw.client.listTools();
      expect(tools.map((t) => t.name).every((n) => n.startsWith("mcphub_"))).toBe(true);
      expect(tools).toHaveLength(8);
    } finally {
      await gw.close();
    }
  });

  it("pins under a budget: complete definitions admitted first-fit, byte-identical across runs", async () => {
    const cfg = home.writeConfig(
      {
        expose: "lazy",
        servers: servers(),
        agents: { small: { pin: ["memory", "ev__echo"], tool_schema_budget: "3KB" } },
      },
      "budget.yaml",
    );
    const listings: string[] = [];
    for (let run = 0; run < 2; run++) {
      const gw = await startGateway(home, cfg, { agent: "small" });
      try {
        await waitReady(gw, ["ev", "memory"]);
        const listing = await gw.client.listTools();
        listings.push(JSON.stringify(listing));
        const names = listing.tools.map((t) => t.name).filter((n) => !n.startsWith("mcphub_"));
        expect(names.length).toBeGreaterThan(0);
        expect(names.every((n) => n.startsWith("memory__") || n === "ev__echo")).toBe(true);
        const report = doc(await gw.call("mcphub_list_servers")).tool_schema_budget as { budget_bytes: number; advertised_tools: number; omitted_tools: number; eligible_tools: number; advertised_definition_bytes: number };
        expect(report.budget_bytes).toBe(3072);
        expect(report.advertised_tools).toBe(names.length);
        expect(report.advertised_definition_bytes).toBeLessThanOrEqual(3072);
        expect(report.eligible_tools).toBe(report.advertised_tools + report.omitted_tools);
        expect(gw.client.getInstructions()).toMatch(/3072/);
        // An omitted pinned tool is still callable.
        const omitted = (doc(await gw.call("mcphub_list_servers")).tool_schema_budget as { omitted_names?: string[] }).omitted_names ?? [];
        if (omitted.includes("memory__read_graph")) {
          expect((await gw.call("mcphub_call_tool", { tool: "memory__read_graph" })).isError).toBeFalsy();
        }
      } finally {
        await gw.close();
      }
    }
    expect(listings[0]).toBe(listings[1]);
  });
});
