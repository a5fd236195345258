import YAML from "yaml";
import { reattachComments } from "../src/config/yaml-text.js";
const src = `servers:
  a:
    command: x
    args:
      - 1
    # trailing comment in a
  # comment for b
  b:
    command: z

# Before groups
groups:
  g: [a]
`;
const doc = YAML.parseDocument(src);
reattachComments(doc, src);
console.log(doc.toString() === src);
doc.setIn(["servers", "c"], doc.createNode({ command: "y" }));
console.log(doc.toString());
doc.deleteIn(["servers", "a"]);
console.log(doc.toString());
