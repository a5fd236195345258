#!/usr/bin/env node
// The ops benchmark's OTLP/HTTP receiver, in a process of its own so its CPU is neither the
// gateway's nor the bench client's: reads each export and answers 200, counting the spans it
// was sent and the requests they came in. It takes OTLP/protobuf (mcphub's) and OTLP/JSON (the
// SDK's OTLPTraceExporter, the bench's SDK rows). Prints its port; GET / answers
// {"spans": N, "requests": M}.
import { createServer } from "node:http";

/** The length-delimited fields numbered `want` of one protobuf message (other wire types skipped). */
function submessages(buf, want) {
  const out = [];
  let pos = 0;
  const varint = () => {
    let v = 0;
    let mul = 1;
    for (;;) {
      const b = buf[pos++];
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
  };
  while (pos < buf.length) {
    const key = varint();
    const wire = key & 7;
    if (wire === 0) varint();
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      const n = varint();
      if (key >>> 3 === want) out.push(buf.subarray(pos, pos + n));
      pos += n;
    } else throw new Error(`wire type ${wire}`);
  }
  return out;
}

/** ExportTraceServiceRequest: resource_spans (1) -> scope_spans (2) -> spans (2). */
const protoSpans = (buf) => submessages(buf, 1).reduce((n, rs) => n + submessages(rs, 2).reduce((m, ss) => m + submessages(ss, 2).length, 0), 0);

let spans = 0;
let requests = 0;
const server = createServer((req, res) => {
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ spans, requests }));
    return;
  }
  const chunks = [];
  req.on("data", (d) => chunks.push(d));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const proto = String(req.headers["content-type"]).startsWith("application/x-protobuf");
    spans += proto ? protoSpans(body) : (body.toString("utf8").match(/"spanId"/g) ?? []).length;
    requests++;
    if (proto) res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    else res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
// Ends with its parent (the bench closes its stdin).
process.stdin.on("end", () => process.exit(0)).resume();
