// Issue 15, items 1 and 2: real bytes written to a real `mcphub mcp serve` process's stdin.
// Every malformed message gets exactly one JSON-RPC 2.0 error reply (or, for a notification, none),
// a line over max_message_size is answered with an error naming the limit (with its id when it can
// be read), and the gateway keeps serving afterwards.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempHome, type TempHome } from "../helpers/gateway.js";
import { RawGateway, type RawReply } from "../helpers/raw-stdio.js";

let home: TempHome;

beforeAll(() => {
  home = tempHome("mcphub-hygiene-");
});
afterAll(() => home.cleanup());

/** [label, line, expected reply: undefined = no reply at all] */
const BAD: [string, string | Buffer, { id: unknown; code: number } | undefined][] = [
  ["garbage", "this is not json", { id: null, code: -32700 }],
  ["truncated JSON", '{"jsonrpc":"2.0","id":1,"method":"tools/list"', { id: null, code: -32700 }],
  ["invalid UTF-8", Buffer.from([0xff, 0xfe, 0x7b]), { id: null, code: -32700 }],
  ["empty object", "{}", { id: null, code: -32600 }],
  ["empty array", "[]", { id: null, code: -32600 }],
  ["batch", '[{"jsonrpc":"2.0","id":2,"method":"ping"}]', { id: null, code: -32600 }],
  ["bare string", '"ping"', { id: null, code: -32600 }],
  ["bare number", "42", { id: null, code: -32600 }],
  ["null", "null", { id: null, code: -32600 }],
  ['jsonrpc "1.0"', '{"jsonrpc":"1.0","id":3,"method":"ping"}', { id: 3, code: -32600 }],
  ["no jsonrpc", '{"id":4,"method":"ping"}', { id: 4, code: -32600 }],
  ["object id", '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', { id: null, code: -32600 }],
  ["array id", '{"jsonrpc":"2.0","id":[1],"method":"ping"}', { id: null, code: -32600 }],
  ["boolean id", '{"jsonrpc":"2.0","id":true,"method":"ping"}', { id: null, code: -32600 }],
  ["fractional id", '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', { id: null, code: -32600 }],
  ["null id", '{"jsonrpc":"2.0","id":null,"method":"ping"}', { id: null, code: -32600 }],
  ["id only", '{"jsonrpc":"2.0","id":5}', { id: null, code: -32600 }],
  ["numeric method", '{"jsonrpc":"2.0","id":6,"method":7}', { id: 6, code: -32600 }],
  ["empty method", '{"jsonrpc":"2.0","id":7,"method":""}', { id: 7, code: -32600 }],
  ['params "x" on tools/call', '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":"x"}', { id: 8, code: -32602 }],
  ["array params on tools/call", '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":["a"]}', { id: 9, code: -32602 }],
  ["tools/call without name", '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{}}', { id: 10, code: -32602 }],
  ["tools/call numeric name", '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":5}}', { id: 11, code: -32602 }],
  ["tools/call string arguments", '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"a__b","arguments":"x"}}', { id: 12, code: -32602 }],
  ["resources/read without uri", '{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{}}', { id: 13, code: -32602 }],
  ["prompts/get without name", '{"jsonrpc":"2.0","id":14,"method":"prompts/get","params":{}}', { id: 14, code: -32602 }],
  ["unknown method", '{"jsonrpc":"2.0","id":15,"method":"foo/bar"}', { id: 15, code: -32601 }],
  ["request carrying a result", '{"jsonrpc":"2.0","id":16,"method":"ping","result":{}}', { id: 16, code: -32600 }],
  ["result and error", '{"jsonrpc":"2.0","id":17,"result":{},"error":{"code":1,"message":"x"}}', { id: null, code: -32600 }],
  ["string id, bad params", '{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":[]}}', { id: "abc", code: -32602 }],
  ['params "x" on tools/list', '{"jsonrpc":"2.0","id":18,"method":"tools/list","params":"x"}', { id: 18, code: -32602 }],
  ["notification with a numeric method", '{"jsonrpc":"2.0","method":5}', { id: null, code: -32600 }],
  ["notification with string params", '{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}', undefined],
  ["blank line", "   ", undefined],
];

/** Sends one line, then a ping as a sentinel; returns every reply that came before the sentinel's. */
async function repliesTo(gw: RawGateway, line: string | Buffer, sentinel: number): Promise<RawReply[]> {
  await gw.write(line);
  await gw.write(`\n${JSON.stringify({ jsonrpc: "2.0", id: `sentinel-${sentinel}`, method: "ping" })}\n`);
  const out: RawReply[] = [];
  for (;;) {
    const m = await gw.next();
    if (m.id === `sentinel-${sentinel}`) return out;
    out.push(m);
  }
}

describe("malformed JSON-RPC on stdio", () => {
  it("answers every malformed message exactly once, per JSON-RPC 2.0, and keeps serving", async () => {
    const config = home.writeConfig({ servers: {} }, "hygiene.yaml");
    const gw = new RawGateway(home, config);
    try {
      await gw.initialize();
      const failures: string[] = [];
      let n = 0;
      for (const [label, line, want] of BAD) {
        const got = await repliesTo(gw, line, n++);
        const shape = got.map((r) => ({ id: r.id, code: r.error?.code }));
        if (want === undefined ? got.length !== 0 : got.length !== 1 || shape[0]?.id !== want.id || shape[0]?.code !== want.code) {
          failures.push(`${label}: expected ${JSON.stringify(want ?? "no reply")}, got ${JSON.stringify(got)}`);
        }
        for (const r of got) {
          if (r.jsonrpc !== "2.0" || !("id" in r)) failures.push(`${label}: reply is not JSON-RPC 2.0: ${JSON.stringify(r)}`);
          const msg = r.error?.message ?? "";
          if (/MCP error/.test(msg) || msg.length > 300 || /"code":|\n/.test(msg)) failures.push(`${label}: message is not short and clean: ${msg}`);
        }
      }
      expect(failures).toEqual([]);
      // Still serving, and an unknown mounted tool's error carries its text once.
      const tools = await gw.request(100, "tools/list");
      expect(Array.isArray(tools.result?.tools)).toBe(true);
      const unknown = await gw.request(101, "tools/call", { name: "nope__x", arguments: {} });
      expect(unknown.error?.code).toBe(-32602);
      expect(unknown.error?.message).toMatch(/^unknown tool "nope__x"/);
    } finally {
      await gw.close();
    }
  });
});

describe("oversized lines on stdio", () => {
  it("answers a line over max_message_size with an error naming the limit and its id, and keeps serving", async () => {
    const config = home.writeConfig({ servers: {}, max_message_size: "1MB" }, "small-limit.yaml");
    const gw = new RawGateway(home, config);
    try {
      await gw.initialize();
      // The id comes after 2 MiB of arguments: it is read while the line streams past.
      const pad = "x".repeat(2 * 1024 * 1024);
      await gw.write(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a__b","arguments":{"id":99,"blob":"${pad}"}},"id":"big-1"}\n`);
      const r = await gw.next();
      expect(r.id).toBe("big-1");
      expect(r.error?.code).toBe(-32600);
      expect(r.error?.message).toMatch(/exceeds the gateway's max_message_size of 1 MiB/);
      // A notification that large gets no reply; the next request is answered normally.
      await gw.write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"blob":"${pad}"}}\n`);
      const ping = await gw.request(7, "ping");
      expect(ping.result).toEqual({});
      expect(gw.stderr.match(/skipped a .* message from the client: larger than max_message_size \(1 MiB\)/g)?.length).toBe(2);
      expect(gw.exit).toBeUndefined();
    } finally {
      await gw.close();
    }
  });

  it("serves a 12 MiB request under the default limit instead of exiting", async () => {
    const config = home.writeConfig({ servers: {} }, "default-limit.yaml");
    const gw = new RawGateway(home, config);
    try {
      await gw.initialize();
      const pad = "y".repeat(12 * 1024 * 1024);
      const r = await gw.request(1, "tools/list", { _meta: { pad } });
      expect(Array.isArray(r.result?.tools)).toBe(true);
      expect((await gw.request(2, "ping")).result).toEqual({});
    } finally {
      await gw.close();
    }
  });
});
