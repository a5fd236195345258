// One writer of the concurrency test: records `count` new tools of server "s" one at a time, each
// a separate read-modify-write of the shared file, and approves its own pending one at the end.
import { DefinitionStore, observedTool } from "../../../src/guard/store.js";

const [dataDir, id, count] = process.argv.slice(2) as [string, string, string];
const store = new DefinitionStore(dataDir);
for (let k = 0; k < Number(count); k++) {
  await store.observe("s", [observedTool(`t${id}_${k}`, { name: `t${id}_${k}`, inputSchema: { type: "object" } })], { quarantine: false });
}
await store.observe("s", [observedTool(`q${id}`, { name: `q${id}`, inputSchema: { type: "object" } })], { quarantine: true });
await store.approve("s", [`q${id}`]);
