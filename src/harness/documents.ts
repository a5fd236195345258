// A harness file opened for careful editing. Each format keeps as much of the file as it can:
//  - JSON / JSONC: the touched entry's text is spliced into the file (located with jsonc-parser's
//    syntax tree), so every other byte survives: keys, order, comments, one-line entries.
//  - YAML: edited through the `yaml` Document API, so comments and key order survive.
//  - TOML: only the touched entry's `[section.name]` table is rewritten (checked by parsing the
//    result); a layout that does not allow that falls back to re-serialising the whole file.
import {
  findNodeAtLocation,
  getNodeValue,
  parse as parseJsonc,
  parseTree,
  printParseErrorCode,
  type Node as JsonNode,
  type ParseError,
} from "jsonc-parser";
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

/** The last property node named `name` in an object node (the one a JSON reader keeps). */
function lastProperty(obj: JsonNode, name: string): JsonNode | undefined {
  const props = obj.children ?? [];
  for (let i = props.length - 1; i >= 0; i--) if (props[i]?.children?.[0]?.value === name) return props[i];
  return undefined;
}

/** JSON on one line with a space after ":" and ",", the way people write one-line entries. */
function compactJson(value: RawValue): string {
  if (Array.isArray(value)) return `[${value.map(compactJson).join(", ")}]`;
  if (isObject(value)) return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${compactJson(v)}`).join(", ")}}`;
  return JSON.stringify(value);
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

  private tree(): JsonNode {
    const tree = parseTree(this.body, [], { allowTrailingComma: true, disallowComments: false });
    if (!tree) throw new HarnessFileError(`${this.path}: invalid JSON`);
    return tree;
  }

  private replace(from: number, to: number, text: string): void {
    this.body = `${this.body.slice(0, from)}${text}${this.body.slice(to)}`;
  }

  // Edits are spliced into the text by hand: jsonc-parser's modify() re-formats whole lines around
  // an edit, which rewrote neighbouring entries (a one-line object became five lines).

  upsert(name: string, encoded: RawObject, managedKeys: readonly string[]): void {
    const root = this.tree();
    const section = findNodeAtLocation(root, [...this.adapter.section]);
    if (!section || section.type === "null") {
      const value = { [name]: encoded };
      const oneLine = !this.body.trim().includes("\n");
      if (section) this.replace(section.offset, section.offset + section.length, this.render(value, this.lineIndent(section.offset), oneLine));
      else this.insertProperty(root, this.adapter.section[0] ?? "", this.nest(this.adapter.section.slice(1), value));
      return;
    }
    const prop = lastProperty(section, name);
    if (!prop) {
      this.insertProperty(section, name, encoded);
      return;
    }
    const valueNode = prop.children?.[1];
    if (!valueNode) return;
    const existing = getNodeValue(valueNode) as RawValue;
    let merged: RawObject = encoded;
    if (isObject(existing)) {
      merged = { ...existing };
      for (const key of managedKeys) if (!(key in encoded)) delete merged[key];
      Object.assign(merged, encoded);
    }
    if (deepEqual(existing, merged)) return;
    const oneLine = !this.body.slice(valueNode.offset, valueNode.offset + valueNode.length).includes("\n");
    this.replace(valueNode.offset, valueNode.offset + valueNode.length, this.render(merged, this.lineIndent(prop.offset), oneLine));
  }

  remove(name: string): void {
    const section = findNodeAtLocation(this.tree(), [...this.adapter.section]);
    const props = section?.type === "object" ? (section.children ?? []) : [];
    const i = props.findIndex((p) => p.children?.[0]?.value === name);
    const prop = props[i];
    if (!section || !prop) return;
    const prev = props[i - 1];
    const next = props[i + 1];
    const end = prop.offset + prop.length;
    // An entry on lines of its own goes with its lines (its comma and comment too), so the
    // neighbours' lines, comments included, stay as they were.
    const lineStart = this.body.lastIndexOf("\n", prop.offset - 1) + 1;
    const nl = this.body.indexOf("\n", end);
    const rest = nl === -1 ? undefined : this.body.slice(end, this.body[nl - 1] === "\r" ? nl - 1 : nl);
    const tail = rest === undefined ? undefined : /^[ \t]*(,?)[ \t]*(?:\/\/.*|\/\*.*\*\/[ \t]*)?$/.exec(rest);
    if (tail && nl !== -1 && /^[ \t]*$/.test(this.body.slice(lineStart, prop.offset)) && (prev || next)) {
      this.replace(lineStart, nl + 1, "");
      if (!next && prev && tail[1] !== ",") {
        // It was the last entry: the one before it loses its separating comma (strict JSON).
        const comma = /^[ \t]*,/.exec(this.body.slice(prev.offset + prev.length));
        if (comma) this.replace(prev.offset + prev.length + comma[0].length - 1, prev.offset + prev.length + comma[0].length, "");
      }
      return;
    }
    if (prev) this.replace(prev.offset + prev.length, end, "");
    else if (next) this.replace(prop.offset, next.offset, "");
    else this.replace(section.offset + 1, section.offset + section.length - 1, "");
  }

  /** Adds `"key": value` as the last property of an object, in the object's own layout. */
  private insertProperty(obj: JsonNode, key: string, value: RawValue): void {
    const props = obj.children ?? [];
    const last = props[props.length - 1];
    const objText = this.body.slice(obj.offset, obj.offset + obj.length);
    const keyText = JSON.stringify(key);
    if (last) {
      const end = last.offset + last.length;
      if (objText.includes("\n")) {
        const indent = this.lineIndent(last.offset);
        const entry = `${keyText}: ${this.render(value, indent, false)}`;
        // After the last entry's own line (its trailing comma and comment stay where they are),
        // keeping the file's habit of a trailing comma.
        const nl = this.body.indexOf("\n", end);
        const lineEnd = nl === -1 ? -1 : this.body[nl - 1] === "\r" ? nl - 1 : nl;
        const rest = lineEnd === -1 ? undefined : this.body.slice(end, lineEnd);
        const tail = rest === undefined ? undefined : /^[ \t]*(,?)[ \t]*(?:\/\/.*|\/\*.*\*\/[ \t]*)?$/.exec(rest);
        if (tail && lineEnd !== -1) {
          const trailing = tail[1] === ",";
          this.replace(lineEnd, lineEnd, `${this.eol}${indent}${entry}${trailing ? "," : ""}`);
          if (!trailing) this.replace(end, end, ",");
        } else {
          this.replace(end, end, `,${this.eol}${indent}${entry}`);
        }
      } else {
        this.replace(end, end, `, ${keyText}: ${this.render(value, "", true)}`);
      }
      return;
    }
    const close = obj.offset + obj.length - 1;
    const inner = this.body.slice(obj.offset + 1, close);
    if (!this.body.trim().includes("\n") && this.body.trim() !== "{}") {
      this.replace(obj.offset + 1, close, `${inner.trim() === "" ? "" : inner}${keyText}: ${this.render(value, "", true)}`);
      return;
    }
    const base = this.lineIndent(obj.offset);
    const indent = `${base}${this.unit()}`;
    const kept = inner.trim() === "" ? "" : inner.replace(/\s+$/, "");
    this.replace(obj.offset + 1, close, `${kept}${this.eol}${indent}${keyText}: ${this.render(value, indent, false)}${this.eol}${base}`);
  }

  private nest(path: readonly string[], value: RawObject): RawValue {
    return path.reduceRight<RawObject>((inner, key) => ({ [key]: inner }), value);
  }

  private unit(): string {
    return this.insertSpaces ? " ".repeat(this.tabSize) : "\t";
  }

  /** The whitespace that starts the line holding `offset`. */
  private lineIndent(offset: number): string {
    const lineStart = this.body.lastIndexOf("\n", offset - 1) + 1;
    return /^[ \t]*/.exec(this.body.slice(lineStart, offset))?.[0] ?? "";
  }

  /** JSON text of a value placed at `indent`: one line (`{"a": 1, "b": [2]}`) or indented. */
  private render(value: RawValue, indent: string, oneLine: boolean): string {
    if (oneLine) return compactJson(value);
    return JSON.stringify(value, null, this.unit()).split("\n").join(`${this.eol}${indent}`);
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
  /** Entries changed since opening, in order; only their blocks of text are rewritten. */
  private readonly touched = new Set<string>();

  constructor(
    private readonly adapter: HarnessAdapter,
    path: string,
    private readonly source: string,
  ) {
    try {
      this.root = parseToml(source) as RawObject;
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
    this.touched.add(name);
  }

  remove(name: string): void {
    const section = this.sectionObject(false);
    if (section && name in section) {
      delete section[name];
      this.touched.add(name);
    }
  }

  /**
   * Only the touched entries' `[section.name]` blocks are rewritten; every other byte stays. The
   * result is parsed again and must hold exactly the edited data; when the file's layout does not
   * allow that (an inline table, a block split across the file), the whole file is re-serialised.
   */
  text(): string {
    if (this.touched.size === 0) return this.source;
    let text = this.source;
    const section = this.sectionObject(false) ?? {};
    for (const name of this.touched) {
      const value = section[name];
      const block = value === undefined ? "" : stringifyToml(this.nest(name, value));
      text = spliceTomlBlock(text, [...this.adapter.section, name], block);
    }
    try {
      if (canonical(parseToml(text)) === canonical(this.root)) return text;
    } catch {
      // fall through to the full rewrite
    }
    return stringifyToml(this.root);
  }

  private nest(name: string, value: RawValue): RawObject {
    return [...this.adapter.section, name].reduceRight<RawValue>((inner, key) => ({ [key]: inner }), value) as RawObject;
  }
}

/** JSON with object keys sorted, to compare parsed TOML regardless of key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    isObject(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, (v as RawObject)[k]])) : v,
  );
}

/**
 * Replaces the lines of the table `[a.b]` (and its sub-tables `[a.b.x]` that follow it) with
 * `block`, or appends `block` when there is no such table; an empty block removes the table.
 */
function spliceTomlBlock(text: string, path: string[], block: string): string {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const lines = text.split(/\r?\n/);
  const header = (line: string): string[] | undefined => {
    const m = /^\s*\[(?!\[)(.*)\]\s*(?:#.*)?$/.exec(line);
    return m ? splitTomlKey(m[1] ?? "") : undefined;
  };
  const within = (key: string[] | undefined) => key !== undefined && key.length >= path.length && path.every((p, i) => key[i] === p);
  const start = lines.findIndex((l) => within(header(l)) && header(l)?.length === path.length);
  const body = block.replace(/\n+$/, "").split("\n");
  if (start === -1) {
    if (body.length === 1 && body[0] === "") return text;
    const trimmed = text.replace(/\s+$/, "");
    return `${trimmed}${trimmed === "" ? "" : `${eol}${eol}`}${body.join(eol)}${eol}`;
  }
  let end = start + 1;
  while (end < lines.length) {
    const key = header(lines[end] ?? "");
    const isArrayTable = /^\s*\[\[/.test(lines[end] ?? "");
    if ((key !== undefined && !within(key)) || isArrayTable) break;
    end++;
  }
  // Keep the blank lines that separated this table from the next one.
  while (end > start + 1 && (lines[end - 1] ?? "").trim() === "") end--;
  let from = start;
  if (body.length === 1 && body[0] === "") {
    while (from > 0 && (lines[from - 1] ?? "").trim() === "") from--;
    if (from === 0) while (end < lines.length && (lines[end] ?? "").trim() === "") end++;
    return [...lines.slice(0, from), ...lines.slice(end)].join(eol);
  }
  return [...lines.slice(0, from), ...body, ...lines.slice(end)].join(eol);
}

/** `a."b.c" . d` → ["a", "b.c", "d"]; undefined when the key is not simple. */
function splitTomlKey(text: string): string[] | undefined {
  const out: string[] = [];
  const re = /\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*(\.|$)/y;
  let pos = 0;
  while (pos < text.length) {
    re.lastIndex = pos;
    const m = re.exec(text);
    if (!m) return undefined;
    out.push(m[1] !== undefined ? (JSON.parse(`"${m[1]}"`) as string) : (m[2] ?? m[3] ?? ""));
    pos = re.lastIndex;
    if (m[4] === "") break;
  }
  return out;
}
