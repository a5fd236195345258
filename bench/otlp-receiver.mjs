#!/usr/bin/env node
// The ops benchmark's OTLP/HTTP receiver, in a process of its own so its CPU is neither the
// gateway's nor the bench client's: reads each export and answers 200, counting the spans it
// was sent (OTLP JSON: one "spanId" key a span) and the requests they came in. Prints its port;
// GET / answers {"spans": N, "requests": M}.
import { createServer } from "node:http";

let spans = 0;
let requests = 0;
const server = createServer((req, res) => {
  if (req.method === "GET") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ spans, requests }));
    return;
  }
  let body = "";
  req.setEncoding("utf8").on("data", (d) => (body += d));
  req.on("end", () => {
    spans += (body.match(/"spanId"/g) ?? []).length;
    requests++;
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
// Ends with its parent (the bench closes its stdin).
process.stdin.on("end", () => process.exit(0)).resume();
