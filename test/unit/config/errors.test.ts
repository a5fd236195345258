// Malformed configs: each must fail with exactly one readable line that names the place
// (file, dotted path or line:column) and says what is allowed instead.
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfigText, type ConfigFormat } from "../../../src/config/index.js";
import { closest, editDistance } from "../../../src/config/errors.js";

function failure(text: string, format: ConfigFormat = "yaml"): ConfigError {
  try {
    parseConfigText(text, format, `mcphub.${format}`);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected the config to be rejected");
}

/** The one line a user sees for this config. */
function expectOneLine(text: string, expected: string, format: ConfigFormat = "yaml"): void {
  const err = failure(text, format);
  expect(err.message).toBe(expected);
  expect(err.issues).toHaveLength(1);
  // CLI-facing: a user error prints as its lines, never a stack trace.
  expect(err.stack).toBe(`ConfigError: ${expected}`);
}

const HINT = "x".repeat(257);

describe("malformed configs get one precise message", () => {
  const cases: [name: string, text: string, expected: string, format?: ConfigFormat][] = [
    ["unknown top-level key", "servrs: {}\n", 'mcphub.yaml: servrs: unknown key; did you mean "servers"?'],
    [
      "unknown server key (typo of command)",
      "servers:\n  github:\n    comand: gh\n",
      'mcphub.yaml: servers.github.comand: unknown key; did you mean "command"?',
    ],
    [
      "unknown server key with no close match lists the allowed keys",
      "servers:\n  github:\n    command: gh\n    frobnicate: 1\n",
      "mcphub.yaml: servers.github.frobnicate: unknown key; allowed keys: command, args, env, cwd, url, transport, headers, enabled, description, tags, use_when, tool_use_when, vault, vault_only, vault_prefix, start, idle_timeout, namespace, connection, roots, oauth, effects, pin_definitions, quarantine, limits, sandbox",
    ],
    [
      "both command and url",
      "servers:\n  github:\n    command: gh\n    url: https://example.com/mcp\n",
      "mcphub.yaml: servers.github: set either command (stdio) or url (remote), not both",
    ],
    [
      "neither command nor url",
      "servers:\n  github:\n    description: code hosting\n",
      "mcphub.yaml: servers.github: needs a command (stdio server) or a url (remote server)",
    ],
    [
      "bad duration",
      "connect_timeout: fast\n",
      'mcphub.yaml: connect_timeout: "fast" is not a duration; use a number with a unit such as 500ms, 30s, 5m, 2h or 7d',
    ],
    [
      "__ in a server name",
      "servers:\n  my__srv:\n    command: x\n",
      'mcphub.yaml: servers.my__srv: server names must not contain "__" (it separates server and tool)',
    ],
    [
      "reserved server name",
      "servers:\n  mcphub:\n    command: x\n",
      'mcphub.yaml: servers.mcphub: "mcphub" is reserved for the gateway itself; pick another name',
    ],
    [
      "nine use_when hints",
      "servers:\n  a:\n    command: x\n    use_when: [h1, h2, h3, h4, h5, h6, h7, h8, h9]\n",
      "mcphub.yaml: servers.a.use_when: at most 8 use_when hints are allowed (found 9)",
    ],
    [
      "a use_when hint over 256 bytes",
      `servers:\n  a:\n    command: x\n    use_when: [ok, ${HINT}]\n`,
      "mcphub.yaml: servers.a.use_when[1]: use_when hints must be at most 256 bytes (this one is 257)",
    ],
    [
      "bad transport, with a suggestion",
      "servers:\n  a:\n    url: http://127.0.0.1:3001/mcp\n    transport: sse2\n",
      'mcphub.yaml: servers.a.transport: transport must be "http" or "sse" (got "sse2"; did you mean "sse"?)',
    ],
    [
      "headers on a stdio server",
      "servers:\n  a:\n    command: x\n    headers:\n      Authorization: Bearer t\n",
      "mcphub.yaml: servers.a.headers: headers applies only to remote servers (this one has a command)",
    ],
    [
      "response_budget below the minimum",
      "response_budget: 100B\n",
      "mcphub.yaml: response_budget: response_budget must be 0 (unlimited) or at least 512B (got 100B)",
    ],
    [
      "pin naming an unknown server",
      "servers:\n  a:\n    command: x\n  b:\n    command: y\npin: [a, github__search]\n",
      'mcphub.yaml: pin[1]: unknown server "github"; configured servers: a, b',
    ],
    [
      "agent tools entry that is not server__tool",
      "servers:\n  a:\n    command: x\nagents:\n  claude:\n    tools: [search]\n",
      'mcphub.yaml: agents.claude.tools[0]: "search" must be an exact server__tool name',
    ],
    [
      "agent with an unknown type",
      "agents:\n  mine:\n    type: claud\n",
      'mcphub.yaml: agents.mine.type: type must be one of local-agent, claude, claude-desktop, cursor, vscode, codex, opencode, gemini, copilot, qwen, crush, kilo, kimi, hermes, forge (got "claud"; did you mean "claude"?)',
    ],
    ["listen not host:port", "listen: localhost\n", 'mcphub.yaml: listen: listen must be HOST:PORT, e.g. "127.0.0.1:9820"'],
    ["a fraction where a whole number belongs", "max_sessions_per_agent: 2.5\n", "mcphub.yaml: max_sessions_per_agent: expected a whole number, got a number (2.5)"],
    ["detached reserved above per_agent", "detached: {per_agent: 4, reserved: 5}\n", "mcphub.yaml: detached.reserved: detached.reserved must not be larger than detached.per_agent"],
    ["http_limits header longer than the whole request", "http_limits: {header_timeout: 60s, request_timeout: 30s}\n", "mcphub.yaml: http_limits.header_timeout: http_limits.header_timeout must not be longer than http_limits.request_timeout (the whole request includes its head)"],
    ["http_limits zero timeout", "http_limits: {keep_alive_timeout: 0}\n", "mcphub.yaml: http_limits.keep_alive_timeout: http_limits.keep_alive_timeout must be positive"],
    ["http_limits per-client cap above the total", "http_limits: {max_connections: 10}\n", "mcphub.yaml: http_limits.max_connections_per_client: http_limits.max_connections_per_client must not be larger than http_limits.max_connections"],
    ["detached shared negative", "detached: {shared: -1}\n", "mcphub.yaml: detached.shared: detached.shared must be at least 0"],
    [
      "env on a remote server",
      "servers:\n  a:\n    url: http://127.0.0.1:3001/mcp\n    env:\n      TOKEN: x\n",
      "mcphub.yaml: servers.a.env: env applies only to stdio servers (this one has a url)",
    ],
    [
      "url without a scheme",
      "servers:\n  github:\n    url: api.github.com/mcp\n",
      "mcphub.yaml: servers.github.url: url must start with http:// or https://",
    ],
    [
      "a type error says what is expected and what was found",
      "servers:\n  a:\n    command: x\n    tags: docs\n",
      'mcphub.yaml: servers.a.tags: expected a list of strings, got a string ("docs")',
    ],
    [
      "args given as one string",
      "servers:\n  a:\n    command: x\n    args: --port 3000\n",
      'mcphub.yaml: servers.a.args: expected a list of strings or numbers, got a string ("--port 3000")',
    ],
    [
      "an empty server entry",
      "servers:\n  a:\n",
      "mcphub.yaml: servers.a: expected a map of settings, got nothing (an empty value)",
    ],
    ["a boolean given as a word", "verbatim: yes\n", 'mcphub.yaml: verbatim: expected true or false, got a string ("yes")'],
    ["a list at the top level", "- servers\n", "mcphub.yaml: the config must be a map of settings, got a list"],
    [
      "group naming an unknown server",
      "servers:\n  a:\n    command: x\ngroups:\n  dev: [a, nope]\n",
      'mcphub.yaml: groups.dev[1]: unknown server "nope"; configured servers: a',
    ],
    [
      "bad tool_schema_budget",
      "agents:\n  la:\n    tool_schema_budget: lots\n",
      'mcphub.yaml: agents.la.tool_schema_budget: "lots" is not a byte size; use an integer or a size such as 900B, 32KB or 1MB',
    ],
    [
      "YAML syntax error with line and column",
      "servers:\n  a:\n    command: x\n    args: [one, two\n  b:\n    command: y\n",
      "mcphub.yaml:5:3: YAML syntax error: Flow sequence in block collection must be sufficiently indented and end with a ]",
    ],
    ["YAML duplicate key", "expose: lazy\nexpose: all\n", "mcphub.yaml:2:1: YAML syntax error: Map keys must be unique"],
    [
      "TOML: unknown server key",
      '[servers.github]\ncomand = "gh"\n',
      'mcphub.toml: servers.github.comand: unknown key; did you mean "command"?',
      "toml",
    ],
    [
      "TOML: both command and url",
      '[servers.a]\ncommand = "x"\nurl = "http://127.0.0.1:1/mcp"\n',
      "mcphub.toml: servers.a: set either command (stdio) or url (remote), not both",
      "toml",
    ],
    ["TOML syntax error with line and column", '[servers.a]\ncommand = = "x"\n', "mcphub.toml:2:11: TOML syntax error: invalid value", "toml"],
    [
      "JSON: bad duration",
      '{"call_timeout": "forever"}',
      'mcphub.json: call_timeout: "forever" is not a duration; use a number with a unit such as 500ms, 30s, 5m, 2h or 7d',
      "json",
    ],
    [
      "JSON: unknown top-level key",
      '{"agent": {}}',
      'mcphub.json: agent: unknown key; did you mean "agents"?',
      "json",
    ],
    [
      "JSON syntax error (trailing comma) with line and column",
      '{\n  "servers": {\n    "a": {"command": "x",}\n  }\n}\n',
      "mcphub.json:3:26: JSON syntax error: expected a key after the comma (JSON allows no comma before } or ])",
      "json",
    ],
    // Issue 24, item 9: these pointed past the end of the file and quoted it across lines.
    [
      "JSON syntax error: a bare word, at its own line and column, on one line",
      '{\n  "servers": {\n    "a": {"command": x}\n  }\n}\n',
      'mcphub.json:3:22: JSON syntax error: unexpected x: expected a value (text needs double quotes, "x")',
      "json",
    ],
    [
      "JSON syntax error: text after the document, where it is",
      '{\n  "servers": {}\n}\n}\n',
      'mcphub.json:4:1: JSON syntax error: unexpected "}" after the end of the document',
      "json",
    ],
    [
      "JSON syntax error: the file ends early, pointed at its last character",
      '{\n  "servers": {\n',
      "mcphub.json:2:14: JSON syntax error: the file ends before the } that closes an object",
      "json",
    ],
  ];

  it.each(cases)("%s", (_name, text, expected, format) => {
    expectOneLine(text, expected, format ?? "yaml");
  });

  it("reports every independent problem, one line each, in file order", () => {
    const err = failure("verbatim: yes\nservrs: {}\nexpose: some\n");
    expect(err.message.split("\n")).toEqual([
      'mcphub.yaml: verbatim: expected true or false, got a string ("yes")',
      'mcphub.yaml: servrs: unknown key; did you mean "servers"?',
      'mcphub.yaml: expose: expose must be "all" or "lazy" (got "some")',
    ]);
    expect(err.issues.map((i) => i.path)).toEqual(["verbatim", "servrs", "expose"]);
  });

  it("keeps structured issues with line and column for syntax errors", () => {
    const err = failure("a: [\n", "yaml");
    expect(err.issues[0]).toMatchObject({ path: "", line: 2 });
    expect(err.file).toBe("mcphub.yaml");
  });

  it("quotes path segments that are not plain names", () => {
    const err = failure('servers:\n  "my server":\n    command: x\n    tags: 3\n');
    expect(err.message).toContain('servers["my server"].tags: expected a list of strings, got a number (3)');
  });
});

describe("did-you-mean", () => {
  it("measures edits with transpositions", () => {
    expect(editDistance("comand", "command")).toBe(1);
    expect(editDistance("comamnd", "command")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3);
  });

  it("suggests only close words", () => {
    const keys = ["command", "args", "env", "cwd", "url", "use_when", "tool_use_when"];
    expect(closest("comand", keys)).toBe("command");
    expect(closest("use-when", keys)).toBe("use_when");
    expect(closest("Args", keys)).toBe("args");
    expect(closest("urls", keys)).toBe("url");
    expect(closest("frobnicate", keys)).toBeUndefined();
    expect(closest("xyz", keys)).toBeUndefined();
  });
});

describe("valid edge cases", () => {
  it("an empty YAML file is an empty config with defaults", () => {
    const c = parseConfigText("", "yaml");
    expect(c).toMatchObject({ version: 1, expose: "all", servers: {}, connect_timeout: 30_000, response_budget: 32 * 1024 });
    expect(parseConfigText("# only a comment\n", "yaml").servers).toEqual({});
  });

  it("accepts agent type aliases and streamable-http", () => {
    const c = parseConfigText(
      "servers:\n  r:\n    url: https://example.com/mcp\n    transport: streamable-http\nagents:\n  cc:\n    type: claude-code\n",
      "yaml",
    );
    expect(c.servers.r?.transport).toBe("http");
    expect(c.agents.cc?.type).toBe("claude");
  });
});
