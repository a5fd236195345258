// JSON read and measured without building it whole: a value's nesting depth without recursion
// (depth.ts), the top-level id of a message too large to parse (id-scan.ts), and a value's
// serialised size or text in pieces (stream.ts).
export { nestedTooDeep } from "./depth.js";
export { TopLevelIdScanner } from "./id-scan.js";
export { jsonByteLength, jsonPieces, jsonTextOf } from "./stream.js";
