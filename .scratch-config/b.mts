import { z } from "zod";
import YAML from "yaml";
import { parse as tparse, TomlError } from "smol-toml";
const a = z.array(z.string()).max(2, { error: (iss) => `at most 2 (found ${(iss.input as unknown[]).length})` });
console.log(JSON.stringify(a.safeParse(["a","b","c"]).error?.issues));
const s = z.string().refine((x) => x.length < 3, { error: (iss) => `too long (${String(iss.input).length})` });
console.log(JSON.stringify(s.safeParse("abcd").error?.issues));
const d = z.union([z.string(), z.number()]).describe("a duration");
console.log(d.description, d instanceof z.ZodUnion);
const p = z.string().transform((t) => t).pipe(z.enum(["a"]));
console.log(p instanceof z.ZodPipe, (p as z.ZodPipe).in instanceof z.ZodPipe, (p as z.ZodPipe).out instanceof z.ZodEnum);
const doc = YAML.parseDocument("a: 1\nb: [1, 2\nc: 3\n");
console.log(doc.errors.map((e) => [e.code, e.message, e.linePos]));
const doc2 = YAML.parseDocument("a: 1\na: 2\n");
console.log(doc2.errors.map((e) => [e.code, e.message, e.linePos]));
try { tparse("a = 1\nb = = 2\n"); } catch (e) { const t = e as TomlError; console.log(t instanceof TomlError, t.line, t.column, JSON.stringify(t.message)); }
try { JSON.parse('{\n "a": 1,\n}'); } catch (e) { console.log((e as Error).message); }
console.log(YAML.parseDocument("").toJS(), YAML.parseDocument("# hi\n").toJS());
