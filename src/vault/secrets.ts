// The secret store: PROJECT/KEY → value, kept in one encrypted file (vault/secrets.enc). Every
// update is read-modify-write under an exclusive lock file, landing by atomic rename, so concurrent
// `mcphub vault set` runs and gateways lose nothing; readers need no lock. Values never leave this
// module except through get()/project(): list() returns names only, errors never include values.
import { z } from "zod";
import { deriveKey } from "./crypto.js";
import { withLockFile } from "./fsutil.js";
import { openKeyring, vaultPaths, type Keyring } from "./keys.js";
import { readSealedJson, writeSealedFile } from "./sealedfile.js";

const MAGIC = Buffer.from("MCPHSEC1", "ascii");
const BINDING = "secrets";
const PROJECT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Keys become environment variable names of spawned servers, so they follow env-name rules. */
const KEY = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** A bound that keeps the store a small file; real secrets are far smaller. */
const MAX_VALUE_BYTES = 64 * 1024;

const StoreSchema = z.object({
  v: z.literal(1),
  projects: z.record(z.string(), z.record(z.string(), z.string())),
});
type StoreData = z.infer<typeof StoreSchema>;

/** Parses and validates "PROJECT/KEY"; throws an Error naming exactly what is wrong. */
export function parseSecretRef(ref: string): { project: string; key: string } {
  const slash = ref.indexOf("/");
  if (slash < 0) throw new Error(`invalid secret reference ${JSON.stringify(ref)}: expected PROJECT/KEY, e.g. github/GITHUB_TOKEN`);
  const project = ref.slice(0, slash);
  const key = ref.slice(slash + 1);
  if (key.includes("/")) throw new Error(`invalid secret reference ${JSON.stringify(ref)}: expected exactly one "/" between PROJECT and KEY`);
  if (!PROJECT.test(project)) {
    throw new Error(
      `invalid project ${JSON.stringify(project)} in ${JSON.stringify(ref)}: use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`,
    );
  }
  if (!KEY.test(key)) {
    throw new Error(
      `invalid key ${JSON.stringify(key)} in ${JSON.stringify(ref)}: use an environment-variable name (letters, digits, "_", not starting with a digit, at most 128)`,
    );
  }
  return { project, key };
}

/** "vault://PROJECT/KEY" (a remote server's header value) → "PROJECT/KEY"; undefined for other values. */
export function secretRefFromUrl(value: string): string | undefined {
  return value.startsWith("vault://") ? value.slice("vault://".length) : undefined;
}

function validateProject(project: string): void {
  if (!PROJECT.test(project)) {
    throw new Error(`invalid project ${JSON.stringify(project)}: use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit`);
  }
}

export interface SecretStoreOptions {
  dataDir: string;
  env?: NodeJS.ProcessEnv;
  /** An already-opened keyring (saves a second scrypt run). */
  keyring?: Keyring;
}

export class SecretStore {
  private constructor(
    private readonly key: Buffer,
    private readonly path: string,
    private readonly lockPath: string,
  ) {}

  static async open(opts: SecretStoreOptions): Promise<SecretStore> {
    const keyring = opts.keyring ?? (await openKeyring(opts.dataDir, opts.env ?? process.env));
    const paths = vaultPaths(opts.dataDir);
    return new SecretStore(deriveKey(keyring.dataKey, "mcphub secrets v1"), paths.secrets, paths.secretsLock);
  }

  async set(ref: string, value: string): Promise<void> {
    const { project, key } = parseSecretRef(ref);
    if (value === "") throw new Error(`refusing to store an empty value for ${project}/${key}`);
    if (Buffer.byteLength(value, "utf8") > MAX_VALUE_BYTES) throw new Error(`the value for ${project}/${key} is larger than 64 KiB`);
    await this.update((data) => {
      const entries = data.projects[project] ?? (Object.create(null) as Record<string, string>);
      entries[key] = value;
      data.projects[project] = entries;
      return true;
    });
  }

  async get(ref: string): Promise<string | undefined> {
    const { project, key } = parseSecretRef(ref);
    const data = await this.load();
    const entries = data.projects[project];
    return entries && Object.hasOwn(entries, key) ? entries[key] : undefined;
  }

  /** Names ("PROJECT/KEY"), sorted; only those of `project` when given. Never values. */
  async list(project?: string): Promise<string[]> {
    if (project !== undefined) validateProject(project);
    const data = await this.load();
    const names: string[] = [];
    for (const [p, entries] of Object.entries(data.projects)) {
      if (project !== undefined && p !== project) continue;
      for (const k of Object.keys(entries)) names.push(`${p}/${k}`);
    }
    return names.sort();
  }

  /** Removes a secret; false when it did not exist. */
  async rm(ref: string): Promise<boolean> {
    const { project, key } = parseSecretRef(ref);
    let removed = false;
    await this.update((data) => {
      const entries = data.projects[project];
      if (!entries || !Object.hasOwn(entries, key)) return false;
      delete entries[key];
      if (Object.keys(entries).length === 0) delete data.projects[project];
      removed = true;
      return true;
    });
    return removed;
  }

  /** Every secret of a project as KEY → value (what a stdio server with `vault: PROJECT` gets as env). */
  async project(project: string): Promise<Record<string, string>> {
    validateProject(project);
    const data = await this.load();
    return { ...(data.projects[project] ?? {}) };
  }

  private async load(): Promise<StoreData> {
    const read = await readSealedJson(this.path, this.key, MAGIC, BINDING, StoreSchema, `the secret store ${this.path}`);
    if (!read) return { v: 1, projects: Object.create(null) as StoreData["projects"] };
    const parsed = read.raw;
    // Rebuilt from the raw parse (zod's copy drops a "__proto__" key) into null-prototype maps,
    // so a key named "__proto__" stays plain data.
    const raw = (parsed as { projects: StoreData["projects"] }).projects;
    const projects: StoreData["projects"] = Object.create(null) as StoreData["projects"];
    for (const [p, entries] of Object.entries(raw)) {
      projects[p] = Object.assign(Object.create(null) as Record<string, string>, entries);
    }
    return { v: 1, projects };
  }

  /** Read-modify-write under the lock; `mutate` returns false when nothing changed. */
  private async update(mutate: (data: StoreData) => boolean): Promise<void> {
    await withLockFile(this.lockPath, async () => {
      const data = await this.load();
      if (!mutate(data)) return;
      await writeSealedFile(this.path, this.key, MAGIC, BINDING, Buffer.from(JSON.stringify(data), "utf8"));
    });
  }
}
