// OAuth scope strings are space-separated sets; these helpers keep them as sets and back.

export function scopeSet(scope: string | undefined): Set<string> {
  return new Set((scope ?? "").split(/\s+/).filter((s) => s !== ""));
}

/** The union of several scope strings (order of first appearance), or undefined when empty. */
export function unionScope(...scopes: (string | undefined)[]): string | undefined {
  const out = new Set<string>();
  for (const s of scopes) for (const x of scopeSet(s)) out.add(x);
  return out.size > 0 ? [...out].join(" ") : undefined;
}

/** True when every scope in `needed` is in `granted`. */
export function scopeCovers(granted: string | undefined, needed: string | undefined): boolean {
  const have = scopeSet(granted);
  return [...scopeSet(needed)].every((s) => have.has(s));
}
