// Protocol pass-through over the stdio gateway in lazy mode (`mcphub mcp serve`): a downstream
// tool that elicits, samples or asks for roots while serving `mcphub_call_tool` (and a detached
// call, and a pinned mounted tool) reaches the SDK client that made the call, and the answer
// reaches the tool; a client without the capability gets the tool an MCP error at once while the
// gateway stays healthy. Also logging, completion, subscriptions, and server-filesystem taking
// its allowed directories from the harness's roots.
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { PromptListChangedNotificationSchema, ResourceListChangedNotificationSchema, UrlElicitationRequiredError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, doc, FIXTURES, ROOT, tempHome, text, type TempHome } from "../helpers/gateway.js";
import { eventually, fixtureEvents, peerClient, type Answers, type PeerClient } from "../helpers/passthrough.js";

const node = process.execPath;
const FILESYSTEM = join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");

function serve(home: TempHome, cfg: string, answers: Answers, stderr: string[] = []): Promise<PeerClient> {
  const transport = new StdioClientTransport({ command: node, args: [BIN, "--config", cfg, "mcp", "serve"], env: home.env as Record<string, string>, stderr: "pipe" });
  transport.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
  return peerClient(transport, answers);
}

describe("pass-through over the stdio gateway (lazy mode)", () => {
  let home: TempHome;
  let events: string;
  let cfg: string;
  let root: string;
  let peer: PeerClient;
  let rootsNow: { uri: string }[];

  beforeAll(async () => {
    home = tempHome("mcphub-passthrough-");
    events = join(home.dir, "events.ndjson");
    root = join(home.dir, "project");
    mkdirSync(root);
    rootsNow = [{ uri: pathToFileURL(root).href }];
    cfg = home.writeConfig({
      expose: "lazy",
      pin: ["conf__test_sampling"],
      servers: { conf: { command: node, args: [join(FIXTURES, "conformance-server.mjs")], env: { CONFORMANCE_EVENTS: events } } },
    });
    peer = await serve(home, cfg, {
      elicit: (p) =>
        p.mode === "url"
          ? { action: "accept" }
          : { action: "accept", content: { username: "ada", email: "ada@example.com" } },
      sample: (p) => {
        const first = p.messages[0]?.content;
        const asked = first && !Array.isArray(first) && first.type === "text" ? first.text : "";
        return { role: "assistant", content: { type: "text", text: `you asked: ${asked}` }, model: "test-model", stopReason: "endTurn" };
      },
      roots: () => rootsNow,
    });
  });
  afterAll(async () => {
    await peer?.close();
    home?.cleanup();
  });

  it("an elicitation raised while serving mcphub_call_tool reaches the client, and its answer reaches the tool", async () => {
    const r = await peer.call("mcphub_call_tool", { tool: "conf__test_elicitation", arguments: { message: "Who are you?" } });
    expect(text(r)).toBe('User response: action=accept, content={"username":"ada","email":"ada@example.com"}');
    const asked = peer.asked.filter((a) => a.method === "elicitation/create").at(-1);
    expect(asked?.params.message).toBe("Who are you?");
    expect((asked?.params.requestedSchema as { required?: string[] }).required).toEqual(["username", "email"]);
  });

  it("URL-mode elicitation is forwarded as such", async () => {
    const r = await peer.call("mcphub_call_tool", { tool: "conf__test_elicitation_url", arguments: { url: "https://example.com/login" } });
    expect(text(r)).toBe("URL elicitation: action=accept");
    const asked = peer.asked.filter((a) => a.method === "elicitation/create").at(-1);
    expect(asked?.params).toMatchObject({ mode: "url", url: "https://example.com/login" });
    // The server's completion notification reaches the session it asked, by elicitationId.
    await eventually(() => peer.completed.includes(String(asked?.params.elicitationId)), "notifications/elicitation/complete");
  });

  it("a mounted tool's URL-elicitation-required error reaches the client as the protocol error, with its URLs", async () => {
    const pinned = home.writeConfig({ expose: "lazy", pin: ["conf__test_url_required"], servers: { conf: { command: node, args: [join(FIXTURES, "conformance-server.mjs")] } } }, "url.yaml");
    const c = await serve(home, pinned, {});
    try {
      const err = await c.call("conf__test_url_required", { url: "https://example.com/auth" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(UrlElicitationRequiredError);
      expect((err as UrlElicitationRequiredError).elicitations).toEqual([{ mode: "url", message: "Sign in first", url: "https://example.com/auth", elicitationId: "el-required" }]);
      expect((err as Error).message).toBe("MCP error -32042: URL elicitation required");
    } finally {
      await c.close();
    }
  });

  it("sampling reaches the client, through mcphub_call_tool and through a pinned mounted tool", async () => {
    const viaLazy = await peer.call("mcphub_call_tool", { tool: "conf__test_sampling", arguments: { prompt: "two plus two" } });
    expect(text(viaLazy)).toBe("LLM response: you asked: two plus two");
    const viaMount = await peer.call("conf__test_sampling", { prompt: "three" });
    expect(text(viaMount)).toBe("LLM response: you asked: three");
  });

  it("roots/list is answered with the client's roots", async () => {
    const r = await peer.call("mcphub_call_tool", { tool: "conf__test_roots" });
    expect(text(r)).toBe(`roots: ${pathToFileURL(root).href}`);
  });

  it("a detached call's elicitation reaches the session that started it", async () => {
    const accepted = doc(await peer.call("mcphub_call_tool", { tool: "conf__test_elicitation", arguments: { message: "later" }, detach: true }));
    expect(accepted.status).toBe("accepted");
    const done = await eventually(async () => {
      const polled = await peer.call("mcphub_poll_result", { callId: accepted.callId });
      return polled.structuredContent?.status === "pending" ? undefined : polled;
    }, "the detached call");
    expect(text(done)).toContain("action=accept");
    expect(peer.asked.some((a) => a.params.message === "later")).toBe(true);
  });

  it("logging/setLevel is forwarded; messages arrive named after the server, filtered by level, before the result", async () => {
    await peer.client.setLoggingLevel("warning");
    await eventually(() => fixtureEvents(events).some((e) => e.kind === "set-level" && e.level === "warning"), "the level downstream");
    const before = peer.logs.length;
    await peer.call("mcphub_call_tool", { tool: "conf__test_log", arguments: { level: "info", message: "quiet" } });
    const r = await peer.call("mcphub_call_tool", { tool: "conf__test_log", arguments: { level: "error", message: "loud" } });
    expect(text(r)).toBe("logged");
    // Sent by the downstream before its result, relayed before ours.
    expect(peer.logs.slice(before)).toEqual([{ level: "error", logger: "conf/fixture", data: "loud" }]);
  });

  it("completion/complete for a namespaced prompt and a resource template reaches the owning server", async () => {
    const prompt = await peer.client.complete({ ref: { type: "ref/prompt", name: "conf__test_prompt_with_arguments" }, argument: { name: "arg1", value: "par" } });
    expect(prompt.completion.values).toEqual(["paris", "park", "party"]);
    const { resourceTemplates } = await peer.client.listResourceTemplates();
    const template = resourceTemplates.find((t) => t.name === "template-data");
    expect(template?.uriTemplate).toBe("mcphub://conf/test%3A%2F%2Ftemplate%2F{id}%2Fdata");
    const completed = await peer.client.complete({ ref: { type: "ref/resource", uri: template?.uriTemplate ?? "" }, argument: { name: "id", value: "1" } });
    expect(completed.completion.values).toEqual(["1", "123"]);
    const read = await peer.client.readResource({ uri: "mcphub://conf/test%3A%2F%2Ftemplate%2F7%2Fdata" });
    expect(read.contents[0]).toMatchObject({ uri: "mcphub://conf/test%3A%2F%2Ftemplate%2F7%2Fdata", mimeType: "application/json" });
  });

  it("resources/subscribe reaches the owner; updates arrive under the public URI; unsubscribe releases it", async () => {
    const { resources } = await peer.client.listResources();
    const watched = resources.find((r) => r.name === "watched-resource")?.uri ?? "";
    expect(watched).toBe("mcphub://conf/test%3A%2F%2Fwatched-resource");
    await peer.client.subscribeResource({ uri: watched });
    expect(fixtureEvents(events).filter((e) => e.kind === "subscribed").map((e) => e.uri)).toEqual(["test://watched-resource"]);
    await peer.call("mcphub_call_tool", { tool: "conf__test_touch_resource" });
    await eventually(() => peer.updated.includes(watched), "resources/updated");
    expect(peer.updated).toEqual([watched]);
    await peer.client.unsubscribeResource({ uri: watched });
    await eventually(() => fixtureEvents(events).some((e) => e.kind === "unsubscribed"), "the downstream unsubscribe");
  });

  it("a downstream's resources/list_changed and prompts/list_changed reach the client; the new items are listed under public names", async () => {
    let resourcesChanged = 0;
    let promptsChanged = 0;
    peer.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void resourcesChanged++);
    peer.client.setNotificationHandler(PromptListChangedNotificationSchema, () => void promptsChanged++);
    await peer.call("mcphub_call_tool", { tool: "conf__test_add_resource", arguments: { name: "fresh" } });
    await eventually(() => resourcesChanged > 0 && promptsChanged > 0, "both list_changed notifications");
    const { resources } = await peer.client.listResources();
    expect(resources.map((r) => r.uri)).toContain("mcphub://conf/test%3A%2F%2Fdynamic%2Ffresh");
    const { prompts } = await peer.client.listPrompts();
    expect(prompts.map((p) => p.name)).toContain("conf__dynamic_fresh");
  });

  it("after the downstream restarts, its subscriptions and log level are applied again", async () => {
    const uri = "mcphub://conf/test%3A%2F%2Fwatched-resource";
    await peer.client.subscribeResource({ uri });
    const sub = await eventually(() => fixtureEvents(events).filter((e) => e.kind === "subscribed").at(-1), "the subscription");
    const old = sub.pid;
    process.kill(old, "SIGKILL");
    const again = await eventually(() => fixtureEvents(events).find((e) => e.kind === "subscribed" && e.pid !== old), "the re-subscription");
    await eventually(() => fixtureEvents(events).some((e) => e.kind === "set-level" && e.pid === again.pid && e.level === "warning"), "the level again");
    const before = peer.updated.length;
    await peer.call("mcphub_call_tool", { tool: "conf__test_touch_resource" });
    await eventually(() => peer.updated.length > before, "the update from the new process");
    expect(peer.updated.at(-1)).toBe(uri);
    await peer.client.unsubscribeResource({ uri });
  });

  it("a client without the capabilities: the tool gets the MCP error at once, and the gateway stays healthy", async () => {
    const bare = await serve(home, cfg, {});
    try {
      const elicit = await bare.call("mcphub_call_tool", { tool: "conf__test_elicitation", arguments: { message: "hello?" } });
      expect(elicit.isError).toBe(true);
      expect(text(elicit)).toMatch(/^elicitation failed: MCP error -32601: elicitation\/create: the upstream client did not declare the elicitation capability/);
      const sample = await bare.call("mcphub_call_tool", { tool: "conf__test_sampling", arguments: { prompt: "x" } });
      expect(text(sample)).toMatch(/^sampling failed: MCP error -32601: sampling\/createMessage: the upstream client did not declare the sampling capability/);
      const roots = await bare.call("mcphub_call_tool", { tool: "conf__test_roots" });
      expect(text(roots)).toMatch(/^roots failed: MCP error -32601: roots\/list: the upstream client did not declare the roots capability/);
      const ok = await bare.call("mcphub_call_tool", { tool: "conf__test_simple_text" });
      expect(text(ok)).toBe("This is a simple text response for testing.");
      expect(bare.asked).toEqual([]);
    } finally {
      await bare.close();
    }
  });
});

describe("server-filesystem without directory arguments, through the gateway", () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome("mcphub-fsroots-");
  });
  afterAll(() => home?.cleanup());

  it("lists the harness's root, and follows roots/list_changed", async () => {
    const first = realpathSync(mkdtempSync(join(tmpdir(), "mcphub-root-a-")));
    const second = realpathSync(mkdtempSync(join(tmpdir(), "mcphub-root-b-")));
    writeFileSync(join(first, "hello.txt"), "hi");
    writeFileSync(join(second, "other.txt"), "there");
    let roots = [{ uri: pathToFileURL(first).href, name: "project" }];
    const cfg = home.writeConfig({ expose: "lazy", servers: { fs: { command: node, args: [FILESYSTEM] } } });
    const peer = await serve(home, cfg, { roots: () => roots });
    try {
      const allowed = async () => text(await peer.call("mcphub_call_tool", { tool: "fs__list_allowed_directories" }));
      await eventually(async () => (await allowed()).includes(first), "the root as an allowed directory");
      const listing = await peer.call("mcphub_call_tool", { tool: "fs__list_directory", arguments: { path: first } });
      expect(text(listing)).toContain("[FILE] hello.txt");
      roots = [{ uri: pathToFileURL(second).href, name: "other" }];
      await peer.client.sendRootsListChanged();
      await eventually(async () => (await allowed()).includes(second), "the new root");
      expect(await allowed()).not.toContain(first);
      const other = await peer.call("mcphub_call_tool", { tool: "fs__list_directory", arguments: { path: second } });
      expect(text(other)).toContain("[FILE] other.txt");
    } finally {
      await peer.close();
    }
  });
});
