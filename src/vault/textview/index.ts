// The text view of stored results: the index built while a result is written (scan.ts, types.ts),
// reading it back as text pages, line ranges and blocks (reader.ts, pretty.ts, chars.ts), and
// find, run on a worker thread with a time bound (find.ts, literal.ts, find-runner.ts,
// find-worker.ts). get_result pages and searches a receipt through it.
export { FindBusyError, FindTamperedError, runFind, type FindOutcome } from "./find-runner.js";
export type { FindJob } from "./find.js";
export { readBlock, readLines, readTextPage, type StoredBytes } from "./reader.js";
export { ResultScanner } from "./scan.js";
export { decodeView, emptyView, encodeView, summarize, type ViewIndex, type ViewSummary } from "./types.js";
