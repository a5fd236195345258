// JSON helpers with one job each: canonical JSON and byte order (canonical.ts), a depth check
// without recursion (depth.ts), finding a JSON-RPC id without parsing the message (id-scan.ts),
// the exact text of JSON.stringify produced piece by piece (stream.ts), and hand-checked JSON-RPC
// shapes (jsonrpc.ts). Import the module you need; this entry names the folder.
export { byteOrder, canonicalJson, canonicalize } from "./canonical.js";
