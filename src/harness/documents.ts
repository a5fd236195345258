// A harness file opened for careful editing. Each format keeps as much of the file as it can:
//  - JSON / JSONC: edited in place with jsonc-parser's modify/applyEdits, so unrelated keys,
//    their order, comments and formatting survive; only the touched entry is re-rendered.
//  - YAML: edited through the `yaml` Document API, so comments and key order survive.
//  - TOML: parsed and re-serialized with smol-toml; values and order survive, comments do not.
import { applyEdits, modify, parse as parseJsonc, type ParseError, printParseErrorCode } from "jsonc-parser";
import { isMap, isScalar, isSeq, parseDocument, type Document } from "yaml";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { inferStyle, reattachComments, spliceEdit, type YamlStyle } from "../config/yaml-text.js";
import type { FileFormat, HarnessAdapter, RawObject, RawValue } from "./types.js";

/** A harness file that cannot be read as its format; the message names the file and the problem. */
export class HarnessFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HarnessFileError";
  }
}

export interface HarnessDocument {
  /** Raw entries of the MCP section, in file order, keyed by server name. */
  entries(): Map<string, RawValue>;
  /** Adds an entry, or overlays the managed keys of an existing one (other keys survive). */
  upsert(name: string, encoded: RawObject, managedKeys: readonly string[]): void;
  remove(name: string): void;
  /** The file text after the edits. */
  text(): string;
}

const isObject = (v: unknown): v is RawObject => typeof v === "object" && v !== null && !Array.isArray(v);

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function openDocument(adapter: HarnessAdapter, path: string, text: string): HarnessDocument {
  const open: Record<FileFormat, () => HarnessDocument> = {
    json: () => new JsonDocument(adapter, path, text),
    yaml: () => new YamlDocument(adapter, path, text),
    toml: () => new TomlDocument(adapter, path, text),
  };
  return open[adapter.format]();
}

class JsonDocument implements HarnessDocument {
  private body: string;
  private readonly eol: string;
  private readonly insertSpaces: boolean;
  private readonly tabSize: number;

  constructor(
    private readonly adapter: HarnessAdapter,
    private readonly path: string,
    text: string,
  ) {
    this.body = text.trim() === "" ? "{}\n" : text;
    this.eol = this.body.includes("\r\n") ? "\r\n" : "\n";
    const indent = /^([ \t]+)\S/m.exec(this.body)?.[1] ?? "  ";
    this.insertSpaces = !indent.startsWith("\t");
    this.tabSize = this.insertSpaces ? indent.length : 1;
    const root = this.parse();
    if (!isObject(root)) throw new HarnessFileError(`${path}: the top level must be a JSON object`);
    const section = this.sectionValue(root);
    if (section !== undefined && section !== null && !isObject(section)) {
      throw new HarnessFileError(`${path}: "${adapter.section.join(".")}" must be an object of servers`);
    }
  }

  private parse(): unknown {
    const errors: ParseError[] = [];
    const value = parseJsonc(this.body, errors, { allowTrailingComma: true, disallowComments: false });
    const first = errors[0];
    if (first) {
      const line = this.body.slice(0, first.offset).split("\n").length;
      throw new HarnessFileError(`${this.path}:${line}: invalid JSON (${printParseErrorCode(first.error)})`);
    }
    return value;
  }

  private sectionValue(root: RawObject): RawValue | undefined {
    let cur: RawValue | undefined = root;
    for (const key of this.adapter.section) cur = isObject(cur) ? cur[key] : undefined;
    return cur;
  }

  entries(): Map<string, RawValue> {
    const section = this.sectionValue(this.parse() as RawObject);
    return new Map(isObject(section) ? Object.entries(section) : []);
  }

  private edit(path: (string | number)[], value: RawValue | undefined): void {
    const edits = modify(this.body, path, value, {
      formattingOptions: { insertSpaces: this.insertSpaces, tabSize: this.tabSize, eol: this.eol },
    });
    this.body = applyEdits(this.body, edits);
  }

  upsert(name: string, encoded: RawObject, managedKeys: readonly string[]): void {
    const base = [...this.adapter.section, name];
    if (this.sectionValue(this.parse() as RawObject) === null) {
      // `"mcpServers": null`: replace the null with a section holding this entry.
      this.edit([...this.adapter.section], { [name]: encoded });
      return;
    }
    const existing = this.entries().get(name);
    if (!isObject(existing)) {
      this.edit(base, encoded);
      return;
    }
    for (const key of managedKeys) {
      if (!(key in encoded) && key in existing) this.edit([...base, key], undefined);
    }
    for (const [key, value] of Object.entries(encoded)) {
      if (!deepEqual(existing[key], value)) this.edit([...base, key], value);
    }
  }

  remove(name: string): void {
    this.edit([...this.adapter.section, name], undefined);
  }

  text(): string {
    return this.body.endsWith("\n") ? this.body : `${this.body}${this.eol}`;
  }
}

class YamlDocument implements HarnessDocument {
  private readonly doc: Document;
  /** The serialisation style closest to the file, and the untouched document in that style. */
  private readonly style: YamlStyle;
  private readonly before: string;

  constructor(
    private readonly adapter: HarnessAdapter,
    path: string,
    private readonly source: string,
  ) {
    this.doc = parseDocument(source);
    const first = this.doc.errors[0];
    if (first) throw new HarnessFileError(`${path}: invalid YAML (${first.message.split("\n")[0]})`);
    // Unedited lines keep their exact bytes: the edit is spliced into the original text.
    reattachComments(this.doc, source);
    this.style = inferStyle(this.doc, source);
    this.before = this.doc.toString(this.style);
    const root = this.doc.contents;
    if (root !== null && !isMap(root)) throw new HarnessFileError(`${path}: the top level must be a YAML mapping`);
    const section = this.section();
    const fits = adapter.layout === "list" ? isSeq(section) : isMap(section);
    if (section !== undefined && section !== null && !fits) {
      throw new HarnessFileError(
        `${path}: "${adapter.section.join(".")}" must be a ${adapter.layout === "list" ? "list" : "mapping"} of servers`,
      );
    }
  }

  /** The section node; an empty `servers:` (a null scalar) counts as absent. */
  private section(): unknown {
    if (this.doc.contents === null) return undefined;
    const node = this.doc.getIn(this.adapter.section, true);
    return isScalar(node) && node.value === null ? undefined : node;
  }

  entries(): Map<string, RawValue> {
    const section = this.section();
    const out = new Map<string, RawValue>();
    if (this.adapter.layout === "list" && isSeq(section)) {
      for (const item of section.items) {
        const v = (isMap(item) ? item.toJSON() : null) as RawValue;
        if (isObject(v) && typeof v.name === "string" && !out.has(v.name)) out.set(v.name, v);
      }
    } else if (isMap(section)) {
      for (const [k, v] of Object.entries((section.toJSON() ?? {}) as RawObject)) out.set(k, v);
    }
    return out;
  }

  /** The YAML node of an entry (a mapping), or undefined. */
  private entryNode(name: string) {
    const section = this.section();
    if (this.adapter.layout === "list") {
      if (!isSeq(section)) return undefined;
      const item = section.items.find((i) => isMap(i) && i.get("name") === name);
      return isMap(item) ? item : undefined;
    }
    const node = isMap(section) ? section.get(name, true) : undefined;
    return isMap(node) ? node : undefined;
  }

  upsert(name: string, encoded: RawObject, managedKeys: readonly string[]): void {
    const node = this.entryNode(name);
    if (node) {
      for (const key of managedKeys) if (!(key in encoded) && node.has(key)) node.delete(key);
      for (const [key, value] of Object.entries(encoded)) {
        const cur = node.get(key, true) as { toJSON?: () => unknown } | undefined;
        const curValue = cur && typeof cur.toJSON === "function" ? cur.toJSON() : node.get(key);
        if (!deepEqual(curValue, value)) node.set(key, this.doc.createNode(value));
      }
      return;
    }
    const section = this.section();
    if (this.adapter.layout === "list") {
      const item = this.doc.createNode({ name, ...encoded });
      if (isSeq(section)) section.add(item);
      else this.doc.setIn(this.adapter.section, this.doc.createNode([{ name, ...encoded }]));
    } else if (isMap(section)) {
      section.set(name, this.doc.createNode(encoded));
    } else {
      this.doc.setIn(this.adapter.section, this.doc.createNode({ [name]: encoded }));
    }
  }

  remove(name: string): void {
    const section = this.section();
    if (this.adapter.layout === "list" && isSeq(section)) {
      const i = section.items.findIndex((it) => isMap(it) && it.get("name") === name);
      if (i >= 0) section.delete(i);
    } else if (isMap(section)) {
      section.delete(name);
    }
  }

  text(): string {
    if (this.doc.contents === null) return "";
    return spliceEdit(this.source, this.before, this.doc.toString(this.style));
  }
}

class TomlDocument implements HarnessDocument {
  private readonly root: RawObject;

  constructor(
    private readonly adapter: HarnessAdapter,
    path: string,
    text: string,
  ) {
    try {
      this.root = parseToml(text) as RawObject;
    } catch (err) {
      const msg = err instanceof Error ? err.message.split("\n")[0] : String(err);
      throw new HarnessFileError(`${path}: invalid TOML (${msg})`);
    }
    const section = this.sectionObject(false);
    if (section === null) throw new HarnessFileError(`${path}: "${adapter.section.join(".")}" must be a table of servers`);
  }

  /** The section table; null when present but not a table; created on demand when `create`. */
  private sectionObject(create: boolean): RawObject | undefined | null {
    let cur: RawObject = this.root;
    for (const key of this.adapter.section) {
      const next = cur[key];
      if (next === undefined) {
        if (!create) return undefined;
        cur[key] = {};
        cur = cur[key] as RawObject;
      } else if (isObject(next)) {
        cur = next;
      } else {
        return null;
      }
    }
    return cur;
  }

  entries(): Map<string, RawValue> {
    const section = this.sectionObject(false);
    return new Map(section ? Object.entries(section) : []);
  }

  upsert(name: string, encoded: RawObject, managedKeys: readonly string[]): void {
    const section = this.sectionObject(true) as RawObject;
    const existing = section[name];
    if (isObject(existing)) {
      for (const key of managedKeys) if (!(key in encoded)) delete existing[key];
      Object.assign(existing, encoded);
    } else {
      section[name] = encoded;
    }
  }

  remove(name: string): void {
    const section = this.sectionObject(false);
    if (section) delete section[name];
  }

  text(): string {
    return stringifyToml(this.root);
  }
}
