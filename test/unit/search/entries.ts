// Small catalogue builders for the search tests.
import type { CatalogEntry, JsonObject } from "../../../src/catalog/types.js";
import { SearchIndex } from "../../../src/catalog/search/index.js";

export interface EntrySpec {
  server: string;
  tool: string;
  description?: string;
  title?: string;
  inputSchema?: JsonObject;
  serverDescription?: string;
  tags?: string[];
  useWhen?: string[];
  toolUseWhen?: string[];
  wire?: string;
}

export function entry(spec: EntrySpec): CatalogEntry {
  const wire = spec.wire ?? spec.tool;
  const description = spec.description ?? "";
  const inputSchema = spec.inputSchema ?? { type: "object", properties: {} };
  return {
    server: spec.server,
    tool: spec.tool,
    namespaced: `${spec.server}__${spec.tool}`,
    wire,
    ...(spec.title !== undefined ? { title: spec.title } : {}),
    description,
    inputSchema,
    definition: { name: wire, description, inputSchema: { type: "object" } },
    ...(spec.serverDescription !== undefined ? { serverDescription: spec.serverDescription } : {}),
    tags: spec.tags ?? [],
    useWhen: spec.useWhen ?? [],
    toolUseWhen: spec.toolUseWhen ?? [],
  };
}

/** Groups entries by server and indexes them. */
export function indexOf(entries: CatalogEntry[]): SearchIndex {
  const idx = new SearchIndex();
  const by = new Map<string, CatalogEntry[]>();
  for (const e of entries) by.set(e.server, [...(by.get(e.server) ?? []), e]);
  for (const [server, list] of by) idx.setServer(server, list);
  return idx;
}

/** A small, varied catalogue used across the tests. */
export function sampleCatalog(): CatalogEntry[] {
  return [
    entry({ server: "hitspec", tool: "fetch", description: "Fetch a web page by URL and return it as Markdown.", serverDescription: "HTTP fetching", inputSchema: { type: "object", properties: { url: { type: "string" }, max_length: { type: "number" } }, required: ["url"] } }),
    entry({ server: "github", tool: "create_issue", description: "Create a new issue in a repository.", serverDescription: "GitHub API", inputSchema: { type: "object", properties: { owner: {}, repo: {}, title: {}, body: {} }, required: ["owner", "repo", "title"] } }),
    entry({ server: "github", tool: "list_repositories", description: "List repositories of a user or organisation.", serverDescription: "GitHub API" }),
    entry({ server: "github", tool: "delete_branch", description: "Delete a branch.", serverDescription: "GitHub API" }),
    entry({ server: "files", tool: "read_file", description: "Read the contents of a file from disk.", serverDescription: "Local filesystem" }),
    entry({ server: "files", tool: "write_file", description: "Write text to a file on disk, replacing it.", serverDescription: "Local filesystem" }),
    entry({ server: "mail", tool: "send_email", description: "Send an email message to recipients.", serverDescription: "Email sending" }),
    entry({ server: "media", tool: "resizeImage", description: "Resize a picture to the given width and height.", serverDescription: "Image tools" }),
    entry({ server: "notes", tool: "search_notes", description: "Search your notes by keyword.", serverDescription: "Personal notes", useWhen: ["looking up something written down before"] }),
  ];
}
