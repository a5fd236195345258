// The text view of stored results: the index built while storing must describe exactly the text a
// reader would compute from the parsed result (text blocks joined by "\n", else pretty
// structuredContent), whatever the key order, escapes, characters or how the bytes were split;
// pages, line ranges, blocks and find read it back through the encrypted store.
import { randomInt } from "node:crypto";
import { open, readFile, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ChunkWriter, type ResultHeader } from "../../../src/vault/chunkfile.js";
import { ResultStore, VaultTamperedError } from "../../../src/vault/index.js";
import { codePoints } from "../../../src/vault/textview/chars.js";
import { readBlock, readLines, readTextPage, type StoredBytes } from "../../../src/vault/textview/reader.js";
import { ResultScanner } from "../../../src/vault/textview/scan.js";
import { findDecoded, findInView, type FindJob, type FindMatch } from "../../../src/vault/textview/find.js";
import { requiredLiteral } from "../../../src/vault/textview/literal.js";
import { removeTempDirs, tempDataDir, vaultEnv } from "./helpers.js";

afterAll(removeTempDirs);

const META = { server: "files", tool: "read_file", namespaced: "files__read_file", agent: "claude" };

type Result = { content?: unknown[]; structuredContent?: unknown; isError?: boolean };

/** The text view as a reader of the parsed result would define it. */
function expectedView(r: Result): string {
  const parts: string[] = [];
  for (const b of (r.content ?? []) as { type?: string; text?: unknown; resource?: { text?: unknown } }[]) {
    if (b.type === "text" && typeof b.text === "string") parts.push(b.text.toWellFormed());
    else if (b.type === "resource" && typeof b.resource?.text === "string") parts.push(b.resource.text.toWellFormed());
  }
  if (parts.length > 0) return parts.join("\n");
  return r.structuredContent === undefined ? "" : JSON.stringify(r.structuredContent, null, 2);
}

function lineCount(s: string): number {
  if (s === "") return 0;
  const n = s.split("\n").length;
  return s.endsWith("\n") ? n - 1 : n;
}

/** Random text with every kind of character JSON has to escape or encode in several bytes. */
function mixedText(units: number, seed = randomInt(1 << 30)): string {
  let x = seed;
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 1) / 0x7fffffff;
  const alphabet = ["a", "b", " ", "\n", "é", "😀", '"', "\\", "\u0001", "\t", "中", "\ud800", "x\r\n", "\u2028", "/"];
  const out: string[] = [];
  let n = 0;
  while (n < units) {
    const s = alphabet[Math.floor(next() * alphabet.length)] as string;
    out.push(s);
    n += s.length;
  }
  return out.join("");
}

function index(json: Buffer, split: number) {
  const s = new ResultScanner();
  for (let i = 0; i < json.length; i += split) s.feed(json.subarray(i, i + split));
  return s.finish();
}

const memory = (json: Buffer): StoredBytes => ({ read: async (at, length) => json.subarray(at, at + length) });

async function allPages(view: ReturnType<typeof index>, src: StoredBytes, pageBytes: number): Promise<{ text: string; pages: number }> {
  let text = "";
  let cursor = 0;
  let pages = 0;
  for (;;) {
    const p = await readTextPage(view, src, cursor, pageBytes);
    expect(Buffer.byteLength(p.text, "utf8")).toBeLessThanOrEqual(pageBytes);
    expect(p.cursor).toBe(cursor);
    expect(p.text).toBe(p.text.toWellFormed());
    text += p.text;
    pages++;
    if (p.done) return { text, pages };
    expect(p.nextCursor).toBeGreaterThan(cursor);
    cursor = p.nextCursor;
  }
}

const SHAPES: [string, Result][] = [
  ["one big text block with escapes and every UTF-8 width", { content: [{ type: "text", text: mixedText(300_000, 7) }] }],
  ["keys in any order, empty blocks, images, resources, links", {
    content: [
      { text: "text before its type", type: "text" },
      { type: "image", data: Buffer.from("a tiny png").toString("base64"), mimeType: "image/png" },
      { type: "text", text: "" },
      { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "resource text\n" } },
      { type: "resource", resource: { uri: "file:///b.bin", mimeType: "application/octet-stream", blob: Buffer.from([1, 2, 3, 4]).toString("base64") } },
      { type: "resource_link", uri: "file:///c", name: "c" },
      { type: "audio", mimeType: "audio/wav", data: Buffer.alloc(1000, 7).toString("base64") },
    ],
  }],
  ["structuredContent only, pretty-printed", {
    content: [],
    structuredContent: { rows: Array.from({ length: 2500 }, (_, i) => ({ id: i, label: mixedText(30, i), empty: [], none: {}, n: null, t: true, f: -1.5e-7 })) },
  }],
  ["structuredContent before content, with only an image", { structuredContent: [[[]], {}, "x", 1], content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] } as Result],
  ["text wins over structuredContent", { content: [{ type: "text", text: "a\n" }, { type: "text", text: "b" }], structuredContent: { a: 1 } }],
  ["only newlines", { content: [{ type: "text", text: "\n".repeat(150_000) }] }],
  ["a lone surrogate pair split by escapes", { content: [{ type: "text", text: `x\ud83dy\ude00z😀${"é".repeat(70_000)}` }] }],
  ["nothing readable", { content: [], isError: true }],
];

describe("the view index matches the parsed result", () => {
  for (const [name, result] of SHAPES) {
    it(name, async () => {
      const json = Buffer.from(JSON.stringify(result), "utf8");
      const want = expectedView(result);
      for (const split of [json.length, 65_536, 4093, 7, 1]) {
        if (split === 1 && json.length > 50_000) continue;
        const view = index(json, split);
        expect(view.ok).toBe(true);
        expect(view.chars).toBe(codePoints(want));
        expect(view.bytes).toBe(Buffer.byteLength(want, "utf8"));
        expect(view.lines).toBe(lineCount(want));
        const { text } = await allPages(view, memory(json), 8192);
        expect(text).toBe(want);
      }
    });
  }

  it("indentation of structuredContent stops growing at 64 levels", async () => {
    let deep: unknown = "core";
    for (let i = 0; i < 100; i++) deep = [deep];
    const json = Buffer.from(JSON.stringify({ content: [], structuredContent: deep }));
    const view = index(json, 7);
    const { text } = await allPages(view, memory(json), 8192);
    const lines = text.split("\n");
    expect(lines[64]).toBe(`${"  ".repeat(64)}[`);
    expect(lines[100]).toBe(`${"  ".repeat(64)}"core"`);
    expect(JSON.parse(text)).toEqual(deep);
    expect(view.chars).toBe(codePoints(text));
  });

  it("counts content kinds and lists non-text blocks with their decoded size", async () => {
    const result = SHAPES[1]?.[1] as Result;
    const json = Buffer.from(JSON.stringify(result));
    const view = index(json, 5);
    expect(view.kinds).toEqual({ text: 2, image: 1, resource: 2, resource_link: 1, audio: 1 });
    expect(view.blocks.map((b) => [b.index, b.type, b.mimeType, b.bytes])).toEqual([
      [1, "image", "image/png", 10],
      [4, "resource", "application/octet-stream", 4],
      [5, "resource_link", "application/json", Buffer.byteLength(JSON.stringify({ type: "resource_link", uri: "file:///c", name: "c" }))],
      [6, "audio", "audio/wav", 1000],
    ]);
    const audio = view.blocks[3];
    if (!audio) throw new Error("no audio block");
    // Paged at odd cursors and sizes, the bytes come back exactly.
    const parts: Buffer[] = [];
    for (let c = 0; c < audio.bytes; c += 301) parts.push(await readBlock(audio, memory(json), c, 301));
    expect(Buffer.concat(parts).equals(Buffer.alloc(1000, 7))).toBe(true);
    const link = view.blocks[2];
    if (!link) throw new Error("no link block");
    expect(JSON.parse((await readBlock(link, memory(json), 0, 1 << 20)).toString())).toEqual({ type: "resource_link", uri: "file:///c", name: "c" });
  });

  it("pages start anywhere, prefer line ends, and never split a character", async () => {
    const text = Array.from({ length: 4000 }, (_, i) => `line ${i + 1} ${"é😀".repeat(i % 13)}`).join("\n");
    const json = Buffer.from(JSON.stringify({ content: [{ type: "text", text }] }));
    const view = index(json, 9999);
    const chars = [...text];
    for (const cursor of [0, 1, 17, 65_000, 70_001, chars.length - 3, chars.length]) {
      const page = await readTextPage(view, memory(json), cursor, 500);
      expect(page.text).toBe(chars.slice(cursor, page.nextCursor).join(""));
      expect(page.line).toBe(chars.slice(0, cursor).filter((c) => c === "\n").length + 1);
      if (!page.done) expect(page.text.endsWith("\n")).toBe(true);
    }
  });

  it("reads line ranges, clipped to a byte budget at a line end", async () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `L${i + 1}`);
    const text = lines.join("\n");
    const json = Buffer.from(JSON.stringify({ content: [{ type: "text", text }] }));
    const view = index(json, 65_536);
    const src = memory(json);
    const r = await readLines(view, src, 70_000, 70_002, 1 << 20);
    expect(r?.text).toBe("L70000\nL70001\nL70002\n");
    expect(r).toMatchObject({ fromLine: 70_000, toLine: 70_002, truncated: false });
    expect(r?.cursor).toBe(text.indexOf("L70000\n"));
    const last = await readLines(view, src, 99_999, 200_000, 1 << 20);
    expect(last?.text).toBe("L99999\nL100000");
    expect(last).toMatchObject({ toLine: 100_000, truncated: false, done: true });
    const clipped = await readLines(view, src, 10, 1000, 19);
    expect(clipped?.text).toBe("L10\nL11\nL12\nL13\n");
    expect(clipped).toMatchObject({ toLine: 13, truncated: true });
    expect(await readLines(view, src, 100_001, 100_002, 100)).toBeUndefined();
  });

  it("bytes that are not a JSON object give an empty view", () => {
    for (const bad of ["[1,2]", '"text"', "{", "not json", '{"a":1}x']) {
      const view = index(Buffer.from(bad), 2);
      expect(view.chars).toBe(0);
      expect(view.ok).toBe(false);
    }
  });
});

describe("find over the view", () => {
  const run = async (text: string, source: string, opts: { flags?: string; context?: number; maxMatches?: number } = {}) => {
    const json = Buffer.from(JSON.stringify({ content: [{ type: "text", text }] }));
    const view = index(json, 65_536);
    const matches: FindMatch[] = [];
    const r = await findInView(view, memory(json), { source, flags: opts.flags ?? "", context: opts.context ?? 0, maxMatches: opts.maxMatches ?? 20 }, (m) => matches.push(m));
    return { matches, truncated: r.truncated, text };
  };

  it("finds a needle on line 70,000 and its cursor is where that line starts", async () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `row ${i + 1} ${"ünïcødé 😀".repeat(3)}`);
    lines[69_999] = "the NEEDLE is here";
    const { matches, text } = await run(lines.join("\n"), "NEEDLE", { context: 2 });
    expect(matches).toHaveLength(1);
    const m = matches[0] as FindMatch;
    expect(m.line).toBe(70_000);
    expect([...text].slice(m.cursor).join("").startsWith("the NEEDLE is here\n")).toBe(true);
    expect(m.before).toEqual([lines[69_997], lines[69_998]]);
    expect(m.after).toEqual([lines[70_000], lines[70_001]]);
  });

  it("reports each line once, stops at maxMatches and says so", async () => {
    const text = Array.from({ length: 50 }, (_, i) => `x x x ${i}`).join("\n");
    const { matches, truncated } = await run(text, "x", { maxMatches: 5 });
    expect(matches.map((m) => m.line)).toEqual([1, 2, 3, 4, 5]);
    expect(truncated).toBe(true);
    const all = await run(text, "x", { maxMatches: 50 });
    expect(all.truncated).toBe(false);
    expect(all.matches).toHaveLength(50);
  });

  it("a literal found in the stored bytes gives exactly what searching the decoded text gives", async () => {
    const lines: string[] = [];
    for (let i = 0; i < 30_000; i++) lines.push(i % 1000 === 7 ? `tricky \\n "quoted" \u0001 n u0001 ${mixedText(20, i)}` : `plain line ${i} ${mixedText(30, i)}`);
    lines[29_000] = `${"é".repeat(100_000)} needle in a long line`;
    const text = lines.join("\n");
    const json = Buffer.from(JSON.stringify({ content: [{ type: "text", text }, { type: "text", text: "second block: needle n" }] }));
    const view = index(json, 65_536);
    for (const literal of ["needle", "n", '"quoted"', "\\n", "u0001", "\u0001", "😀", "é", "plain line 2999"]) {
      const job = { source: literal.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&"), flags: "", context: 1, maxMatches: 40 };
      const slow: FindMatch[] = [];
      const fast: FindMatch[] = [];
      const a = await findInView(view, memory(json), job, (m) => slow.push(m));
      const b = await findInView(view, memory(json), { ...job, literal }, (m) => fast.push(m));
      expect({ literal, truncated: b.truncated, lines: fast.map((m) => [m.line, m.cursor, m.matchCursor]) }).toEqual({ literal, truncated: a.truncated, lines: slow.map((m) => [m.line, m.cursor, m.matchCursor]) });
      const short = (ms: FindMatch[]) => ms.filter((m) => m.matchCursor === undefined);
      expect(short(fast)).toEqual(short(slow));
    }
    // A literal across a mark (the first mark falls 64 KiB into the text) is found once.
    for (const shift of [1, 3, 5]) {
      const across = `${"a".repeat(65_536 - shift)}NEEDLE${"b".repeat(10)}\nend`;
      const j = Buffer.from(JSON.stringify({ content: [{ type: "text", text: across }] }));
      const v = index(j, 4096);
      expect(v.marks.length).toBeGreaterThan(1);
      const hits: FindMatch[] = [];
      await findInView(v, memory(j), { source: "NEEDLE", flags: "", context: 0, maxMatches: 5, literal: "NEEDLE" }, (m) => hits.push(m));
      expect(hits.map((m) => [m.line, m.cursor, m.matchCursor])).toEqual([[1, 0, 65_536 - shift]]);
    }
  });

  it("a pattern with a literal part is searched through that literal, with the same answer", async () => {
    const lines: string[] = [];
    for (let i = 0; i < 20_000; i++) lines.push(`${i % 3 ? "INFO" : "ERROR"} req=${i} took ${i % 1000}ms "path" ${mixedText(12, i)}`);
    const text = lines.join("\n");
    const json = Buffer.from(JSON.stringify({ content: [{ type: "text", text }] }));
    const view = index(json, 65_536);
    for (const source of ["ERROR req=1\\d{3} ", "took 99\\dms", "^ERROR req=\\d+5 took", "req=(12|13)\\d\\d took [23]", "\"path\" ."]) {
      expect(requiredLiteral(source, "")).toBeDefined();
      const job: FindJob = { source, flags: "", context: 2, maxMatches: 30 };
      const slow: FindMatch[] = [];
      const fast: FindMatch[] = [];
      const a = await findDecoded(view, memory(json), job, (m) => slow.push(m));
      const b = await findInView(view, memory(json), job, (m) => fast.push(m));
      expect({ source, truncated: b.truncated, matches: fast }).toEqual({ source, truncated: a.truncated, matches: slow });
      expect(slow.length).toBeGreaterThan(0);
    }
  });

  it("reads a required literal off a pattern only when it is safe to", () => {
    const cases: [string, string, string | undefined][] = [
      ["NEEDLE-\\d{4}", "", "NEEDLE-"],
      ["ab?cde", "", "cde"],
      ["a+bcd", "", "bcd"],
      ["(foo|bar)bazz", "", "bazz"],
      ["[0-9]+ms took", "", "ms took"],
      ["\\.json$", "", ".json"],
      ["foo|barbaz", "", undefined],
      ["abc\\sdef", "", undefined],
      ["[^x]abcdef", "", undefined],
      ["abcdef", "i", undefined],
      ["abc.def", "s", undefined],
      ["a.b", "", undefined],
      ["x{2,}yzw", "", "yzw"],
      ["(a)\\1bcd", "", undefined],
    ];
    for (const [source, flags, want] of cases) expect({ source, got: requiredLiteral(source, flags) }).toEqual({ source, got: want });
  });

  it("anchors and flags work per line; a line far longer than a window is shown around the match", async () => {
    const long = `${"a".repeat(600_000)}TARGET${"b".repeat(10)}`;
    const { matches } = await run(`first\nsecond line\n${long}\nlast`, "^second|target$|^LAST", { flags: "i" });
    expect(matches.map((m) => m.line)).toEqual([2, 4]);
    const hit = await run(`first\n${long}`, "TARGET");
    const m = hit.matches[0] as FindMatch;
    expect(m.line).toBe(2);
    expect(m.cursor).toBe(6);
    expect(m.matchCursor).toBe(6 + 600_000);
    expect(Buffer.byteLength(m.text)).toBeLessThanOrEqual(400);
    expect(m.text).toContain("TARGET");
  });
});

describe("the stored index", () => {
  async function store() {
    const dataDir = await tempDataDir();
    return { dataDir, store: await ResultStore.open({ dataDir, retentionMs: 3_600_000, env: vaultEnv(dataDir) }) };
  }

  it("is written with the result, read back by another process's store, and summarised by put", async () => {
    const { dataDir, store: s } = await store();
    const text = `${"héllo wörld 😀\n".repeat(300_000)}end`;
    const meta = await s.put(META, JSON.stringify({ content: [{ type: "text", text }, { type: "image", data: "AAAA", mimeType: "image/png" }] }));
    expect(meta.view).toEqual({ source: "text", chars: codePoints(text), lines: 300_001, kinds: { text: 1, image: 1 }, blocks: 1 });
    const other = await ResultStore.open({ dataDir, retentionMs: 3_600_000, env: vaultEnv(dataDir) });
    const view = await other.view(meta.callId);
    expect(view.lines).toBe(300_001);
    const { text: back } = await allPages(view, other.bytesOf(meta.callId), 8192);
    expect(back).toBe(text);
  });

  it("a result stored before indexes existed (format v1) is indexed on first use", async () => {
    const { dataDir, store: s } = await store();
    // Write a v1 file the way the previous version did: same key, no view index.
    const probe = await s.put(META, "{}");
    const payload = Buffer.from(JSON.stringify({ content: [{ type: "text", text: "old\nresult" }] }));
    const header: ResultHeader = {
      v: 1,
      callId: "legacy1",
      ...META,
      kind: "result",
      mediaType: "application/json",
      created: Date.now(),
      expires: Date.now() + 3_600_000,
      totalBytes: payload.length,
      chunkSize: 65_536,
      chunkCount: 1,
    };
    const keyring = (s as unknown as { dataKey: Buffer }).dataKey;
    const path = join(dataDir, "vault", "results", "legacy1.res");
    const handle = await open(path, "wx", 0o600);
    const writer = await ChunkWriter.start(handle, keyring, header);
    await writer.push(payload);
    await writer.finish();
    await handle.close();
    expect(probe.view.source).toBe("none");
    const view = await s.view("legacy1");
    expect(view.lines).toBe(2);
    expect((await readTextPage(view, s.bytesOf("legacy1"), 0, 100)).text).toBe("old\nresult");
    const found = await s.find("legacy1", { source: "result", flags: "", context: 0, maxMatches: 5 }, 30_000);
    expect(found.matches.map((m) => m.line)).toEqual([2]);
  });

  it("a flipped or cut-off index fails authentication", async () => {
    const { dataDir, store: s } = await store();
    const meta = await s.put(META, JSON.stringify({ content: [{ type: "text", text: "secret text" }] }));
    const path = join(dataDir, "vault", "results", `${meta.callId}.res`);
    const bytes = await readFile(path);
    const flipped = Buffer.from(bytes);
    const at = flipped.length - 10; // inside the sealed index
    flipped[at] = (flipped[at] as number) ^ 1;
    await writeFile(path, flipped);
    await expect(s.view(meta.callId)).rejects.toBeInstanceOf(VaultTamperedError);
    await writeFile(path, bytes);
    expect((await s.view(meta.callId)).chars).toBe(11);
    await truncate(path, bytes.length - 4);
    await expect(s.view(meta.callId)).rejects.toBeInstanceOf(VaultTamperedError);
  });

  it("find runs in a worker and stops a catastrophic pattern at the time bound", async () => {
    const { store: s } = await store();
    const meta = await s.put(META, JSON.stringify({ content: [{ type: "text", text: `${"a".repeat(40)}!\nneedle\n` }] }));
    const ok = await s.find(meta.callId, { source: "needle", flags: "", context: 0, maxMatches: 5 }, 30_000);
    expect(ok).toMatchObject({ status: "ok", truncated: false, owner: { agent: "claude", server: "files" } });
    expect(ok.matches.map((m) => m.line)).toEqual([2]);
    // 2^40 ways to split line 1's forty a's before the "!" fails the match: only the bound ends it.
    const slow = await s.find(meta.callId, { source: "^(a+)+$", flags: "", context: 0, maxMatches: 5 }, 2000);
    expect(slow.status).toBe("timeout");
    const after = await s.find(meta.callId, { source: "needle", flags: "", context: 0, maxMatches: 5 }, 30_000);
    expect(after.status).toBe("ok");
  });
});
