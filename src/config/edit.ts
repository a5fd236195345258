// Changing a config file the way a careful human would: edit the data in place (YAML keeps its
// comments, key order and layout), validate the whole result, and only then replace the file
// atomically, keeping a timestamped backup of the previous version. An invalid edit writes
// nothing at all.
import { randomBytes } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { chmod, copyFile, mkdir, open, realpath, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import YAML from "yaml";
import { stringify as stringifyToml } from "smol-toml";
import type { Config } from "./schema.js";
import { ConfigError, formatPath } from "./errors.js";
import { formatFromPath, type ConfigFormat } from "./paths.js";
import { missingConfig, parseRawText, parseYamlDocument, readConfigFile, toPlainYaml, validateConfig } from "./load.js";
import { inferStyle, reattachComments, spliceEdit, type YamlStyle } from "./yaml-text.js";

export type ConfigKeyPath = readonly (string | number)[];

/** A format-agnostic view of a config document that can be changed in place. */
export interface ConfigEditor {
  /** The plain value at `path` (undefined when absent). */
  get(path: ConfigKeyPath): unknown;
  has(path: ConfigKeyPath): boolean;
  /** Sets a value, creating missing maps (or lists, for numeric segments) on the way. */
  set(path: ConfigKeyPath, value: unknown): void;
  /** Removes a key or list item; returns whether something was removed. */
  delete(path: ConfigKeyPath): boolean;
  /** A plain JS copy of the whole document as it is now. */
  raw(): unknown;
}

interface DocumentBackend extends ConfigEditor {
  serialize(): string;
}

export interface EditOptions {
  /** Start from an empty document when the file does not exist (else: "no config at ..."). */
  createIfMissing?: boolean;
}

/** Mode of a config file mcphub creates: it may hold headers, so only the user reads it. */
export const NEW_FILE_MODE = 0o600;
const NEW_DIR_MODE = 0o700;

/**
 * Loads the config at `path`, lets `mutate` change it, validates the result and saves it
 * atomically with a backup. Returns the validated config. Nothing is written when `mutate`
 * throws, when the result is invalid (ConfigError), or when nothing changed.
 */
export async function editConfig(
  path: string,
  mutate: (ed: ConfigEditor) => void | Promise<void>,
  opts: EditOptions = {},
): Promise<Config> {
  const format = formatFromPath(path);
  const target = await realpath(path).catch(() => path); // edit through a symlink, keep the link
  const original = await readConfigFile(target);
  if (original === undefined && !opts.createIfMissing) throw missingConfig(path);

  const backend = openDocument(original, format, path);
  await mutate(backend);
  const config = validateConfig(backend.raw(), path);
  const text = backend.serialize();
  if (original !== undefined && text === original) return config;
  await writeAtomically(target, text, original !== undefined);
  return config;
}

export interface NewConfigContent {
  /** A commented YAML starter; written verbatim for .yaml, converted for .toml / .json. */
  yamlText?: string;
  /** Plain config data, serialised in the file's format. */
  raw?: unknown;
}

/** Writes a brand-new config (`mcphub init`). Refuses to replace a file unless `force`. */
export async function writeNewConfig(path: string, content: NewConfigContent, opts: { force?: boolean } = {}): Promise<void> {
  const format = formatFromPath(path);
  const target = await realpath(path).catch(() => path);
  const exists = (await readConfigFile(target)) !== undefined;
  if (exists && !opts.force) {
    throw ConfigError.message(`a config already exists at ${path}; pass --force to replace it (the old one is kept as a backup)`);
  }
  let raw: unknown;
  let text: string;
  if (content.yamlText !== undefined) {
    raw = toPlainYaml(parseYamlDocument(content.yamlText, "starter config"), "starter config");
    validateConfig(raw, path);
    text = format === "yaml" ? withNewline(content.yamlText) : serializePlain(raw ?? {}, format);
  } else if (content.raw !== undefined) {
    raw = content.raw;
    validateConfig(raw, path);
    text = format === "yaml" ? new YAML.Document(raw).toString({ lineWidth: 0 }) : serializePlain(raw, format);
  } else {
    throw new TypeError("writeNewConfig needs yamlText or raw");
  }
  await writeAtomically(target, text, exists);
}

// ---------------------------------------------------------------------------------------------
// Documents

/** The document to edit; `text` undefined means the file does not exist yet. */
function openDocument(text: string | undefined, format: ConfigFormat, label: string): DocumentBackend {
  if (format === "yaml") return new YamlDocument(text ?? "", label);
  const data = text === undefined ? {} : (parseRawText(text, format, label) ?? {});
  return new PlainDocument(data, format, label);
}

/** YAML through the Document API, so comments and layout survive the edit. */
class YamlDocument implements DocumentBackend {
  private readonly doc: YAML.Document.Parsed;
  private readonly style: YamlStyle;
  private readonly before: string;

  constructor(
    private readonly source: string,
    private readonly label: string,
  ) {
    this.doc = parseYamlDocument(source, label);
    reattachComments(this.doc, source);
    this.style = inferStyle(this.doc, source);
    this.before = this.doc.toString(this.style);
  }

  raw(): unknown {
    return toPlainYaml(this.doc, this.label);
  }

  get(path: ConfigKeyPath): unknown {
    return plainGet(this.raw(), path);
  }

  has(path: ConfigKeyPath): boolean {
    return plainHas(this.raw(), path);
  }

  set(path: ConfigKeyPath, value: unknown): void {
    if (value === undefined) {
      this.delete(path);
      return;
    }
    if (path.length === 0) {
      this.doc.contents = this.doc.createNode(value) as YAML.Document.Parsed["contents"];
      return;
    }
    this.ensureCollections(path);
    const existing = this.doc.getIn(path, true);
    if (YAML.isScalar(existing) && isPrimitive(value) && existing.value !== null) {
      // Replace only the value: an inline comment and the quoting style stay.
      existing.value = value;
      return;
    }
    const node = this.doc.createNode(value);
    if (YAML.isCollection(existing) && YAML.isCollection(node) && YAML.isSeq(existing) === YAML.isSeq(node)) {
      // A replaced list or map keeps its look: flow `[a, b]` stays flow, comments stay.
      node.flow = existing.flow;
      node.comment = existing.comment;
      node.commentBefore = existing.commentBefore;
      node.spaceBefore = existing.spaceBefore;
    }
    this.doc.setIn(path, node);
  }

  delete(path: ConfigKeyPath): boolean {
    if (path.length === 0 || !this.has(path)) return false;
    return this.doc.deleteIn(path);
  }

  serialize(): string {
    if (this.doc.contents === null) return this.source; // nothing was ever set
    const after = this.doc.toString(this.style);
    return this.source.trim() === "" ? after : spliceEdit(this.source, this.before, after);
  }

  /** Makes every parent of `path` a collection (an empty `servers:` is null, not a map). */
  private ensureCollections(path: ConfigKeyPath): void {
    const emptyFor = (next: string | number | undefined) => this.doc.createNode(typeof next === "number" ? [] : {});
    const root = this.doc.contents;
    if (root === null || (YAML.isScalar(root) && root.value === null)) {
      this.doc.contents = emptyFor(path[0]) as YAML.Document.Parsed["contents"];
    } else if (!YAML.isCollection(root)) {
      throw ConfigError.message("the config is not a map of settings; cannot edit it", this.label);
    }
    for (let i = 1; i < path.length; i++) {
      const prefix = path.slice(0, i);
      const node = this.doc.getIn(prefix, true);
      if (node === undefined || node === null || (YAML.isScalar(node) && node.value === null)) {
        this.doc.setIn(prefix, emptyFor(path[i]));
      } else if (!YAML.isCollection(node)) {
        throw ConfigError.message(`cannot set ${formatPath(path)}: ${formatPath(prefix)} is not a map or list`, this.label);
      } else if (node.flow && node.items.length === 0) {
        // `servers: {}` getting its first server becomes a block map, as a person would write it
        // (unless it sits inside a flow collection, which must stay on its line).
        const parent = i === 1 ? root : this.doc.getIn(path.slice(0, i - 1), true);
        if (!(YAML.isCollection(parent) && parent.flow)) node.flow = false;
      }
    }
  }
}

/** TOML and JSON: plain data in, re-serialised out (TOML comments are not kept). */
class PlainDocument implements DocumentBackend {
  constructor(
    private data: unknown,
    private readonly format: "toml" | "json",
    private readonly label: string,
  ) {}

  raw(): unknown {
    return structuredClone(this.data);
  }

  get(path: ConfigKeyPath): unknown {
    return structuredClone(plainGet(this.data, path));
  }

  has(path: ConfigKeyPath): boolean {
    return plainHas(this.data, path);
  }

  set(path: ConfigKeyPath, value: unknown): void {
    if (value === undefined) {
      this.delete(path);
      return;
    }
    if (path.length === 0) {
      this.data = structuredClone(value);
      return;
    }
    if (!isContainer(this.data)) this.data = typeof path[0] === "number" ? [] : {};
    let cur = this.data as Container;
    for (let i = 0; i < path.length - 1; i++) {
      const key = path[i] as string | number;
      let next = getChild(cur, key);
      if (next === undefined || next === null) {
        next = typeof path[i + 1] === "number" ? [] : {};
        setChild(cur, key, next);
      } else if (!isContainer(next)) {
        throw ConfigError.message(`cannot set ${formatPath(path)}: ${formatPath(path.slice(0, i + 1))} is not a map or list`, this.label);
      }
      cur = next as Container;
    }
    setChild(cur, path[path.length - 1] as string | number, structuredClone(value));
  }

  delete(path: ConfigKeyPath): boolean {
    if (path.length === 0 || !plainHas(this.data, path)) return false;
    const parent = plainGet(this.data, path.slice(0, -1)) as Container;
    const key = path[path.length - 1] as string | number;
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete parent[String(key)];
    return true;
  }

  serialize(): string {
    return serializePlain(this.data, this.format);
  }
}

function serializePlain(data: unknown, format: "toml" | "json"): string {
  if (format === "json") return `${JSON.stringify(data, null, 2)}\n`;
  return withNewline(stringifyToml(data as Record<string, unknown>));
}

type Container = Record<string, unknown> | unknown[];

function isContainer(v: unknown): v is Container {
  return typeof v === "object" && v !== null;
}

function isPrimitive(v: unknown): v is string | number | boolean {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean";
}

function getChild(c: Container, key: string | number): unknown {
  return Array.isArray(c) ? c[Number(key)] : Object.hasOwn(c, String(key)) ? c[String(key)] : undefined;
}

function setChild(c: Container, key: string | number, value: unknown): void {
  if (Array.isArray(c)) c[Number(key)] = value;
  else c[String(key)] = value;
}

function plainGet(data: unknown, path: ConfigKeyPath): unknown {
  let cur = data;
  for (const key of path) {
    if (!isContainer(cur)) return undefined;
    cur = getChild(cur, key);
  }
  return cur;
}

function plainHas(data: unknown, path: ConfigKeyPath): boolean {
  if (path.length === 0) return true;
  const parent = plainGet(data, path.slice(0, -1));
  if (!isContainer(parent)) return false;
  const key = path[path.length - 1] as string | number;
  return Array.isArray(parent) ? Number(key) >= 0 && Number(key) < parent.length : Object.hasOwn(parent, String(key));
}

function withNewline(text: string): string {
  return text.endsWith("\n") ? text : `${text}\n`;
}

// ---------------------------------------------------------------------------------------------
// Atomic save

/**
 * Replaces `target` with `text`: a temp file in the same directory (same mode as the old file,
 * 0600 for a new one), a backup copy of the old file, then one rename. A reader sees the old or
 * the new file, never a mix; a failure leaves the old file and no temp file behind.
 */
async function writeAtomically(target: string, text: string, exists: boolean): Promise<void> {
  const dir = dirname(target);
  const mode = exists ? (await stat(target)).mode & 0o7777 : NEW_FILE_MODE;
  const tmp = join(dir, `.${basename(target)}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`);
  try {
    if (!exists) await mkdir(dir, { recursive: true, mode: NEW_DIR_MODE });
    const fh = await open(tmp, "wx", mode);
    try {
      await fh.writeFile(text, "utf8");
      await fh.chmod(mode); // open()'s mode is filtered by the umask
      await fh.sync();
    } finally {
      await fh.close();
    }
    if (exists) await backupFile(target, mode);
    await rename(tmp, target);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    if (err instanceof ConfigError) throw err;
    throw ConfigError.message(`cannot save config ${target}: ${(err as Error).message}`);
  }
}

/** Copies `path` to `<path>.bak-YYYYMMDD-HHMMSS[-N]` (UTC) and returns the backup's path. */
export async function backupFile(path: string, mode: number, now: Date = new Date()): Promise<string> {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  for (let n = 0; ; n++) {
    const candidate = `${path}.bak-${stamp}${n === 0 ? "" : `-${n}`}`;
    try {
      await copyFile(path, candidate, fsConstants.COPYFILE_EXCL);
      await chmod(candidate, mode);
      return candidate;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}
