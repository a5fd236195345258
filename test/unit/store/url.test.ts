// The `store:` URL: what is accepted, what each mistake says, and that a password never shows.
import { describe, expect, it } from "vitest";
import { parseStoreUrl, redactStoreUrl } from "../../../src/store/index.js";

describe("the store URL", () => {
  it("parses user, host, port, database and keeps the password out of the connection string", () => {
    const u = parseStoreUrl("postgres://mcphub:s3cret@db.example:6432/team?sslmode=require");
    expect(u).toMatchObject({ user: "mcphub", host: "db.example", port: 6432, database: "team", password: "s3cret" });
    expect(u.connection).not.toContain("s3cret");
    expect(u.connection).toContain("sslmode=require");
    expect(parseStoreUrl("postgresql://m@h/d").port).toBe(5432);
    expect(parseStoreUrl("postgres://m@h/d?password=vault://ops/pg").passwordRef).toBe("ops/pg");
  });

  it("says what is wrong, never quoting a password", () => {
    const cases: [string, RegExp][] = [
      ["not a url", /must be a URL such as postgres:\/\//],
      ["mysql://u@h/db", /must be a postgres:\/\/ URL \(got a mysql: URL\)/],
      ["postgres://h/db", /names no user/],
      ["postgres://u@h/", /names no database/],
      ["postgres://u:pw@h/db?password=vault://a/b", /password twice/],
      ["postgres://u@h/db?password=hunter2", /takes a vault reference/],
    ];
    for (const [text, re] of cases) {
      let msg = "";
      try {
        parseStoreUrl(text);
      } catch (err) {
        msg = (err as Error).message;
      }
      expect(msg, text).toMatch(re);
      expect(msg).not.toMatch(/hunter2|:pw@/);
    }
    expect(redactStoreUrl("postgres://u:pw@h:1/d?password=x")).toBe("postgres://u:***@h:1/d?password=***");
  });
});
