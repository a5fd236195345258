// Discovery on the README's own example config (everything, memory, files: the servers a new user
// meets first), with the real servers behind a real gateway. Everyday requests must find the
// tool a person would pick, and resolve must never be confident about a tool from the wrong
// server. The requests are written for these servers' capabilities, not taken from a benchmark.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doc, startGateway, tempHome, waitReady, type GatewayClient, type TempHome } from "../helpers/gateway.js";
import { exampleConfig, exampleSandboxed } from "../helpers/example.js";
import { checkResolveContract } from "../helpers/resolve-contract.js";

/** Request -> the tools a person would accept as the first answer. */
const FIRST_CHOICE: [string, string[]][] = [
  ["read the README file", ["files__read_text_file", "files__read_file"]],
  ["list the files in the src directory", ["files__list_directory", "files__list_directory_with_sizes"]],
  ["rename notes.txt to archive.txt", ["files__move_file"]],
  ["replace the word foo with bar in config.ts", ["files__edit_file"]],
  ["save this summary to summary.md", ["files__write_file"]],
  ["find all typescript files under src", ["files__search_files"]],
  ["which directories am I allowed to access", ["files__list_allowed_directories"]],
  ["forget everything about the Zephyr project", ["memory__delete_entities"]],
  ["remove the observation that Bob likes tea", ["memory__delete_observations"]],
  ["look up what I saved about Project Apollo", ["memory__search_nodes", "memory__open_nodes"]],
  ["echo hello back to me", ["everything__echo"]],
  ["print the environment variables", ["everything__get-env"]],
  ["compress data.csv with gzip", ["everything__gzip-file-as-resource"]],
  // Eighth round: a dot-file is a file's name, not the environment; a named person is a fact to keep.
  ["what does the .env.example say", ["files__read_text_file"]],
  ["my sister Anna lives in Lisbon", ["memory__create_entities", "memory__add_observations"]],
];

describe("discovery on the example config", () => {
  let home: TempHome;
  let gw: GatewayClient;
  beforeAll(async () => {
    home = tempHome();
    gw = await startGateway(home, exampleConfig(home, { sandboxed: await exampleSandboxed() }));
    await waitReady(gw, ["everything", "memory", "files"]);
  });
  afterAll(async () => {
    await gw?.close();
    home?.cleanup();
  });

  it("ranks the tool a person would pick first for everyday requests", async () => {
    const misses: string[] = [];
    for (const [query, accepted] of FIRST_CHOICE) {
      const found = doc(await gw.call("mcphub_search_tools", { query, max_hits: 3 }));
      const top = (found.matches as { namespaced: string }[])[0]?.namespaced ?? "(none)";
      if (!accepted.includes(top)) misses.push(`${query} -> ${top}`);
    }
    expect(misses).toEqual([]);
  });

  it("is never confident about a tool from the wrong server", async () => {
    // A filler word ("works") that the files server repeats in its descriptions outweighs the
    // memory server's routing hint here; the ranking may be wrong, but resolve must say so.
    const cases: [string, string][] = [
      ["remember that Alice works at Acme", "memory"],
      ["Alice no longer works at Acme", "memory"],
      ["recall what we decided about the database migration", "memory"],
      ...FIRST_CHOICE.map(([q, accepted]): [string, string] => [q, (accepted[0] ?? "").split("__")[0] ?? ""]),
    ];
    const wrong: string[] = [];
    for (const [query, server] of cases) {
      const resolved = doc(await gw.call("mcphub_resolve_tool", { query }));
      expect(checkResolveContract(resolved)).toEqual([]);
      const rec = resolved.recommendation as { server: string; namespaced: string } | null;
      if (resolved.status === "confident" && rec?.server !== server) wrong.push(`${query} -> ${rec?.namespaced ?? "(none)"}`);
    }
    expect(wrong).toEqual([]);
  });

  it("is never confident for a request no configured tool serves", async () => {
    // Written after the fourth calibration round, never tuned on: things none of the example
    // servers does, several sharing a word with one of their tools (text, image, open, search, run).
    const unservable = [
      "book a flight to Tokyo next Monday",
      "what's the weather in Oslo",
      "send a text message to mom",
      "order a large pepperoni pizza",
      "convert 20 dollars to euros",
      "turn on the living room lights",
      "post this picture to twitter",
      "translate hello into German",
      "call a taxi to the airport",
      "what time is it in Sydney",
      "create a calendar event for lunch on Friday",
      "run the unit tests",
      "deploy the app to production",
      "search the web for MCP news",
      "open a pull request on GitHub",
    ];
    const confident: string[] = [];
    for (const query of unservable) {
      const resolved = doc(await gw.call("mcphub_resolve_tool", { query }));
      expect(checkResolveContract(resolved)).toEqual([]);
      const rec = resolved.recommendation as { namespaced: string } | null;
      if (resolved.status === "confident") confident.push(`${query} -> ${rec?.namespaced ?? "(none)"}`);
    }
    expect(confident).toEqual([]);
  });
});
