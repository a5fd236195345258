// A file's kind from its extension, through the IANA media-type registry as mime-db ships it: a
// request about "~/Recordings/standup.m4a" is about audio, one about "error.png" about an image,
// though it says neither word. Only the top-level types a tool's text names for what it reads
// (image, audio); video is left out because mime-db's extensions collide with source files
// (".ts" is video/mp2t, not TypeScript), and an extension whose types disagree on the top level
// (".mp4": application/mp4 and video/mp4) says nothing.
import { createRequire } from "node:module";

const KINDS = new Set(["image", "audio"]);

let byExtension: Map<string, string> | undefined;

function table(): Map<string, string> {
  if (byExtension) return byExtension;
  const out = new Map<string, string>();
  const clash = new Set<string>();
  let db: unknown;
  try {
    db = createRequire(import.meta.url)("mime-db");
  } catch {
    // A broken install degrades to no media kinds, as WordNet's absence degrades to no relations.
  }
  // The registry's shape is checked field by field (a schema library's parse of 2,500 entries
  // cost more than the rest of the table).
  for (const [type, info] of Object.entries(typeof db === "object" && db !== null ? db : {})) {
    const top = type.slice(0, type.indexOf("/"));
    const extensions: unknown = typeof info === "object" && info !== null ? (info as { extensions?: unknown }).extensions : undefined;
    if (!Array.isArray(extensions)) continue;
    for (const ext of extensions) {
      if (typeof ext !== "string") continue;
      const seen = out.get(ext);
      if (seen === undefined && !clash.has(ext)) out.set(ext, top);
      else if (seen !== undefined && seen !== top) {
        out.delete(ext);
        clash.add(ext);
      }
    }
  }
  for (const [ext, top] of out) if (!KINDS.has(top)) out.delete(ext);
  byExtension = out;
  return out;
}

/** The media kind ("image", "audio") a file extension says, lowercase without its dot; undefined for any other. */
export function mediaKindOf(extension: string): string | undefined {
  return table().get(extension.toLowerCase());
}
