// `mcphub approve`'s write, in a process of its own: approves the pending version of one tool.
import { DefinitionStore } from "../../../src/guard/store.js";

const [dataDir, server, wire] = process.argv.slice(2) as [string, string, string];
const approved = await new DefinitionStore(dataDir).approve(server, [wire]);
if (approved.length !== 1) throw new Error(`expected to approve ${wire}, approved ${approved.length}`);
