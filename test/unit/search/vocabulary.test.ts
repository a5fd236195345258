import { describe, expect, it } from "vitest";
import { Vocabulary, withinOneEdit } from "../../../src/catalog/search/vocabulary.js";

describe("Vocabulary", () => {
  it("finds one-edit neighbours and forgets them when their last reference goes", () => {
    const v = new Vocabulary();
    v.add("branch");
    v.add("brunch");
    v.add("branch"); // two references
    expect(v.oneEditAway("brnch")).toEqual(["branch", "brunch"]);
    v.release("brunch");
    expect(v.oneEditAway("brnch")).toEqual(["branch"]);
    v.release("branch");
    expect(v.oneEditAway("brnch")).toEqual(["branch"]); // one reference left
    v.release("branch");
    expect(v.oneEditAway("brnch")).toEqual([]);
    expect(v.has("branch")).toBe(false);
  });

  it("keeps a deletion shared by several terms until the last of them goes", () => {
    const v = new Vocabulary();
    // "plants" is a deletion of all three (one letter dropped from each).
    for (const t of ["planets", "plaints", "pliants"]) v.add(t);
    expect(v.oneEditAway("plants")).toEqual(["plaints", "planets", "pliants"]);
    v.release("planets");
    expect(v.oneEditAway("plants")).toEqual(["plaints", "pliants"]);
    v.release("plaints");
    expect(v.oneEditAway("plants")).toEqual(["pliants"]);
    v.add("planets");
    expect(v.oneEditAway("plants")).toEqual(["planets", "pliants"]);
    v.release("planets");
    v.release("pliants");
    expect(v.oneEditAway("plants")).toEqual([]);
  });

  it("relates prefixes in both directions, shortest extensions first", () => {
    const v = new Vocabulary();
    for (const t of ["repository", "repo", "report", "reposit"]) v.add(t);
    expect(v.prefixRelated("repos", 8)).toEqual(["reposit", "repository", "repo"]);
    expect(withinOneEdit("emial", "email")).toBe(true);
    expect(withinOneEdit("email", "mail")).toBe(true);
    expect(withinOneEdit("email", "emails2")).toBe(false);
  });
});
