// Keeping a hand-written YAML file byte-for-byte outside the node an edit touched.
//
// The `yaml` Document API keeps comments, key order and quoting, but re-serialising normalises
// some layout (two spaces before an inline comment become one, sequence indentation, ...). So an
// edit is rendered twice, before and after, in the same style; the line diff between the two
// renderings is exactly the edit, and it is applied to the original text. Unchanged lines keep
// their original bytes. When the original does not line up with its rendering (a very unusual
// layout), the full rendering is used: still correct, comments still kept.
import { isDeepStrictEqual } from "node:util";
import YAML from "yaml";

export type YamlStyle = Pick<YAML.ToStringOptions, "indent" | "indentSeq" | "flowCollectionPadding" | "lineWidth">;

const CANDIDATE_STYLES: YamlStyle[] = [];
for (const indent of [2, 4]) {
  for (const indentSeq of [true, false]) {
    for (const flowCollectionPadding of [false, true]) {
      // lineWidth 0: never fold long strings, a hand-written file rarely is folded.
      CANDIDATE_STYLES.push({ indent, indentSeq, flowCollectionPadding, lineWidth: 0 });
    }
  }
}

/** The serialisation style whose rendering of `doc` is closest to `source` (exact when possible). */
export function inferStyle(doc: YAML.Document, source: string): YamlStyle {
  let best: YamlStyle = CANDIDATE_STYLES[0] ?? {};
  let bestScore = -1;
  const lines = source.split("\n");
  for (const style of CANDIDATE_STYLES) {
    const rendered = doc.toString(style);
    if (rendered === source) return style;
    const out = rendered.split("\n");
    let score = out.length === lines.length ? 1 : 0;
    for (let i = 0; i < Math.min(out.length, lines.length); i++) if (out[i] === lines[i]) score++;
    if (score > bestScore) {
      bestScore = score;
      best = style;
    }
  }
  return best;
}

/**
 * Applies the change between `before` and `after` (two renderings of the document, same style)
 * to `source` (the original text `before` was rendered from). Returns `after` itself when the
 * original cannot be lined up with `before`.
 */
export function spliceEdit(source: string, before: string, after: string): string {
  if (source === before) return after;
  const src = source.split("\n");
  const b = before.split("\n");
  const a = after.split("\n");
  if (src.length !== b.length) return after;
  for (let i = 0; i < src.length; i++) if (squash(src[i]) !== squash(b[i])) return after;

  const out: string[] = [];
  const ops = lineDiff(b, a);
  for (let i = 0; i < ops.length; ) {
    const op = ops[i];
    if (op?.kind === "same") {
      out.push(src[op.beforeIndex] ?? "");
      i++;
      continue;
    }
    // A hunk: consecutive removals and additions. When it replaces lines one for one, each new
    // line keeps the spacing of the line it replaces (`expose:   lazy    # note` → `all`).
    const removed: number[] = [];
    const added: string[] = [];
    for (; i < ops.length && ops[i]?.kind !== "same"; i++) {
      const h = ops[i];
      if (h?.kind === "remove") removed.push(h.beforeIndex);
      else if (h?.kind === "add") added.push(h.line);
    }
    added.forEach((line, k) => {
      const at = removed.length === added.length ? removed[k] : undefined;
      out.push(at === undefined ? line : keepSpacing(src[at] ?? "", line));
    });
  }
  const merged = out.join("\n");
  // The splice must mean exactly what the full rendering means; otherwise trust the rendering.
  const check = YAML.parseDocument(merged);
  if (check.errors.length > 0 || !isDeepStrictEqual(check.toJS(), YAML.parse(after))) return after;
  return merged;
}

function squash(line: string | undefined): string {
  return (line ?? "").replace(/\s+/g, " ").trim();
}

type DiffOp = { kind: "same"; beforeIndex: number } | { kind: "add"; line: string } | { kind: "remove"; beforeIndex: number };

/**
 * `replacement` laid out with the whitespace of `original` when both have the same number of
 * words (a changed value, same shape). Quoted text is left alone: its spaces are content.
 */
function keepSpacing(original: string, replacement: string): string {
  if (/["']/.test(replacement)) return replacement;
  const words = (s: string) => s.trim().split(/\s+/);
  const o = words(original);
  const r = words(replacement);
  if (o.length !== r.length) return replacement;
  const gaps = original.match(/\s+/g) ?? [];
  const lead = /^\s*/.exec(original)?.[0] ?? "";
  const inner = lead === "" ? gaps : gaps.slice(1);
  let out = lead;
  r.forEach((w, k) => {
    out += w;
    if (k < r.length - 1) out += inner[k] ?? " ";
  });
  return out;
}

/** A minimal line diff (common prefix/suffix, then LCS on the middle; configs are small). */
function lineDiff(b: string[], a: string[]): DiffOp[] {
  let start = 0;
  while (start < b.length && start < a.length && b[start] === a[start]) start++;
  let endB = b.length;
  let endA = a.length;
  while (endB > start && endA > start && b[endB - 1] === a[endA - 1]) {
    endB--;
    endA--;
  }
  const ops: DiffOp[] = [];
  for (let i = 0; i < start; i++) ops.push({ kind: "same", beforeIndex: i });

  const n = endB - start;
  const m = endA - start;
  // lcs[i][j]: LCS length of b[start+i..endB) and a[start+j..endA).
  const lcs: number[] = new Array<number>((n + 1) * (m + 1)).fill(0);
  const at = (i: number, j: number) => lcs[i * (m + 1) + j] ?? 0;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * (m + 1) + j] = b[start + i] === a[start + j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
    }
  }
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && b[start + i] === a[start + j]) {
      ops.push({ kind: "same", beforeIndex: start + i });
      i++;
      j++;
    } else if (j < m && (i >= n || at(i, j + 1) >= at(i + 1, j))) {
      ops.push({ kind: "add", line: a[start + j] ?? "" });
      j++;
    } else {
      ops.push({ kind: "remove", beforeIndex: start + i });
      i++;
    }
  }
  for (let k = endB; k < b.length; k++) ops.push({ kind: "same", beforeIndex: k });
  return ops;
}

/**
 * The `yaml` parser gives a comment that follows a nested block to the innermost collection,
 * even when the source indents it as a comment on the *next outer key*:
 *
 *     servers:
 *       a:
 *         command: x
 *
 *     # Named sets of servers      <- parsed as a trailing comment of servers.a
 *     groups: ...
 *
 * so a server added under `servers` would land below that comment and deleting `a` would drop
 * it. This moves each such comment, by its indentation in the source, to the key it precedes.
 */
export function reattachComments(doc: YAML.Document, source: string): void {
  const lines = source.split("\n");
  const lineStarts: number[] = [];
  let offset = 0;
  for (const line of lines) {
    lineStarts.push(offset);
    offset += line.length + 1;
  }
  const lineOf = (pos: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((lineStarts[mid] ?? 0) <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const indentOf = (line: string | undefined): number => (line ?? "").length - (line ?? "").trimStart().length;

  interface Frame {
    coll: YAML.YAMLMap | YAML.YAMLSeq;
    index: number;
    column: number;
  }

  const relocate = (node: YAML.YAMLMap | YAML.YAMLSeq, column: number, stack: Frame[]): void => {
    const comment = node.comment;
    const end = node.range?.[2];
    if (!comment || end === undefined) return;
    const commentLines = comment.split("\n");
    // Find each comment line in the source, starting at the node's last item, to learn its indent.
    const last = node.items[node.items.length - 1];
    const lastNode = YAML.isPair(last) ? last.key : last;
    let cursor = YAML.isNode(lastNode) && lastNode.range ? lineOf(lastNode.range[0]) : lineOf(node.range?.[0] ?? 0);
    const indents: (number | undefined)[] = [];
    for (const text of commentLines) {
      if (text === "") {
        indents.push(undefined);
        continue;
      }
      while (cursor < lines.length && (lines[cursor] ?? "").trim() !== `#${text}`) cursor++;
      if (cursor >= lines.length) return; // not found: leave the comment where the parser put it
      indents.push(indentOf(lines[cursor]));
      cursor++;
    }
    const k = indents.findIndex((ind) => ind !== undefined && ind < column);
    if (k < 0) return;
    const movedColumn = indents[k] ?? 0;
    const keep = commentLines.slice(0, k);
    while (keep.length > 0 && keep[keep.length - 1] === "") keep.pop();
    const moved = commentLines.slice(k).join("\n");
    const blankBefore = k > 0 && commentLines[k - 1] === "";
    node.comment = keep.length > 0 ? keep.join("\n") : null;

    for (let i = stack.length - 1; i >= 0; i--) {
      const frame = stack[i];
      if (frame === undefined || frame.column > movedColumn) continue;
      const next = frame.coll.items[frame.index + 1];
      const anchor = YAML.isPair(next) ? next.key : next;
      if (YAML.isNode(anchor)) {
        anchor.commentBefore = anchor.commentBefore ? `${moved}\n${anchor.commentBefore}` : moved;
        if (blankBefore) anchor.spaceBefore = true;
      } else {
        // No next key at that level: it trails the outer collection instead.
        frame.coll.comment = frame.coll.comment ? `${frame.coll.comment}\n${moved}` : moved;
      }
      return;
    }
  };

  const walk = (node: unknown, stack: Frame[]): void => {
    if (!YAML.isMap(node) && !YAML.isSeq(node)) return;
    if (node.flow || node.items.length === 0) return;
    const first = node.items[0];
    const firstNode = YAML.isPair(first) ? first.key : first;
    const column = YAML.isNode(firstNode) && firstNode.range ? indentOf(lines[lineOf(firstNode.range[0])]) : 0;
    node.items.forEach((item, index) => {
      walk(YAML.isPair(item) ? item.value : item, [...stack, { coll: node, index, column }]);
    });
    if (stack.length > 0) relocate(node, column, stack);
  };
  walk(doc.contents, []);
}
