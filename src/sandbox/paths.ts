// Path arithmetic for sandbox plans (POSIX paths: both backends are POSIX).
import { posix } from "node:path";

/** `p` is `dir` or lies below it. */
export function isInside(p: string, dir: string): boolean {
  if (dir === "/") return p.startsWith("/");
  return p === dir || p.startsWith(`${dir}/`);
}

/** Number of segments: "/" = 0, "/usr" = 1, "/usr/lib" = 2. */
export function depth(p: string): number {
  return p === "/" ? 0 : p.split("/").length - 1;
}

/** `~` and `~/...` expanded; relative paths resolved against `base`; normalised, no trailing slash. */
export function absolute(p: string, home: string, base: string): string {
  const expanded = p === "~" ? home : p.startsWith("~/") ? posix.join(home, p.slice(2)) : p;
  return posix.resolve(base, expanded);
}

/** `p` written with `~` for the home directory, for messages and summaries. */
export function tilde(p: string, home: string): string {
  if (home !== "/" && isInside(p, home)) return p === home ? "~" : `~${p.slice(home.length)}`;
  return p;
}
