// Small helpers shared by several parts, each with one job: JSON (json/: canonical form,
// streamed measuring, id scanning, hand-checked JSON-RPC shapes), text and unit bounds, error text, the stderr logger,
// user-facing errors, worker threads, memory release, a multimap, the browser launcher. Errors
// and helpers that more than one part needs live here, so no part imports another for them.
export { launch, pickOpener } from "./browser.js";
export { byteOrder, canonicalJson, canonicalize } from "./json/canonical.js";
export { collapseMcpPrefix, errorText } from "./errors.js";
export { TopLevelIdScanner } from "./json/id-scan.js";
export { jsonByteLength, jsonPieces, jsonTextOf } from "./json/stream.js";
export { RELATED_TASK, isId, isObject, isResponse, messageKind, progressTokenOf, type MessageKind } from "./json/jsonrpc.js";
export { memoryLogger, stderrLogger, type Logger } from "./log.js";
export { LARGE_MESSAGE_CHARS, releaseMemory } from "./memory.js";
export { addTo, removeFrom } from "./multimap.js";
export { clipUtf8, collapseWhitespace, truncateUtf8, utf8Bytes } from "./text.js";
export { estimateTokens, formatBytes, formatDuration, parseBytes, parseDuration } from "./units.js";
export { CliError, type CliIO } from "./user-error.js";
export { startWorker } from "./worker.js";
