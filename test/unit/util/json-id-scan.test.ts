import { describe, expect, it } from "vitest";
import { TopLevelIdScanner } from "../../../src/util/json/id-scan.js";

function scan(text: string, chunk = 7) {
  const s = new TopLevelIdScanner();
  const bytes = Buffer.from(text, "utf8");
  for (let i = 0; i < bytes.length; i += chunk) s.feed(bytes.subarray(i, i + chunk));
  return s.result();
}

describe("TopLevelIdScanner", () => {
  it("reads a top-level id before or after large nested content, ignoring nested ids", () => {
    expect(scan('{"jsonrpc":"2.0","id":12,"method":"x","params":{"id":5}}')).toEqual({ id: 12, hasMethod: true });
    expect(scan('{"params":{"id":"inner","a":[{"id":1}]},"method":"tools/call","id":"outer-é"}')).toEqual({ id: "outer-é", hasMethod: true });
    expect(scan('{"jsonrpc":"2.0", "id" : -3 , "result":{"text":"\\"id\\": 9, {"}}')).toEqual({ id: -3, hasMethod: false });
    expect(scan('{"id":"a\\"b","result":{}}')).toEqual({ id: 'a"b', hasMethod: false });
  });

  it("gives null for ids a reply cannot carry", () => {
    expect(scan('{"id":null,"method":"m"}').id).toBeNull();
    expect(scan('{"id":1.5,"method":"m"}').id).toBeNull();
    expect(scan('{"id":{"x":1},"method":"m"}').id).toBeNull();
    expect(scan('{"method":"m","params":{}}')).toEqual({ id: null, hasMethod: true });
    expect(scan("not json at all").id).toBeNull();
  });
});
