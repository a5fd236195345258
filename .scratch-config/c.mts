import YAML from "yaml";
const src = `# top comment
version: 1
expose: lazy   # inline

servers:
  a:
    command: node
    args: [x, y]
    use_when:
    - one
    - "two"
  b:
    url: http://x
    long: "${"word ".repeat(30)}"
# trailing
`;
const doc = YAML.parseDocument(src);
for (const indentSeq of [true, false]) for (const fcp of [true, false])
  console.log(indentSeq, fcp, doc.toString({ indentSeq, flowCollectionPadding: fcp, lineWidth: 0 }) === src);
doc.setIn(["servers", "c"], doc.createNode({ command: "z", args: ["q"] }));
const s = doc.getIn(["expose"], true); console.log(YAML.isScalar(s));
(s as YAML.Scalar).value = "all";
doc.deleteIn(["servers","b"]);
console.log(doc.toString({ indentSeq: false, flowCollectionPadding: false, lineWidth: 0 }));
