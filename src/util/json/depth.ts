// How deeply a JSON value nests, checked without recursion. Much of the gateway walks arguments
// recursively (schema validation, canonical JSON, argument summaries), and a value nested a few
// thousand levels deep would end those walks with "Maximum call stack size exceeded"; it is
// refused up front instead, with the path where it got too deep.

/** Where `value` nests deeper than `max` levels (a path such as `x[0][0][0]…`), or undefined. */
export function nestedTooDeep(value: unknown, max: number): string | undefined {
  interface Frame {
    value: unknown;
    depth: number;
    key: string | number;
    parent: Frame | undefined;
  }
  const stack: Frame[] = [{ value, depth: 0, key: "", parent: undefined }];
  while (stack.length > 0) {
    const f = stack.pop() as Frame;
    const v = f.value;
    if (v === null || typeof v !== "object") continue;
    if (f.depth >= max) return describe(f);
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], depth: f.depth + 1, key: i, parent: f });
    } else {
      for (const k of Object.keys(v)) stack.push({ value: (v as Record<string, unknown>)[k], depth: f.depth + 1, key: k, parent: f });
    }
  }
  return undefined;

  function describe(f: Frame): string {
    const keys: (string | number)[] = [];
    for (let at: Frame | undefined = f; at?.parent; at = at.parent) keys.push(at.key);
    keys.reverse();
    const part = (k: string | number, first: boolean) =>
      typeof k === "number" ? `[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `${first ? "" : "."}${k}` : `[${JSON.stringify(k.length > 40 ? `${k.slice(0, 40)}…` : k)}]`;
    const shown = keys.length > 6 ? [...keys.slice(0, 4)] : keys;
    const path = shown.map((k, i) => part(k, i === 0)).join("") + (keys.length > 6 ? "…" : "");
    return path || "(top)";
  }
}
