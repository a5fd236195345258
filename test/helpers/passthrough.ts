// Helpers for the protocol pass-through tests: an SDK client that answers sampling, elicitation
// and roots (or declares none of them), and the conformance fixture's event file.
import { existsSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CreateMessageRequestSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type CallToolResult,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitRequest,
  type ElicitResult,
  type LoggingMessageNotification,
} from "@modelcontextprotocol/sdk/types.js";

export interface Answers {
  elicit?: (req: ElicitRequest["params"]) => ElicitResult | Promise<ElicitResult>;
  sample?: (req: CreateMessageRequest["params"]) => CreateMessageResult | Promise<CreateMessageResult>;
  roots?: () => { uri: string; name?: string }[];
}

export interface PeerClient {
  client: Client;
  /** Every server→client request the client received, in order (method and params). */
  asked: { method: string; params: Record<string, unknown> }[];
  logs: LoggingMessageNotification["params"][];
  updated: string[];
  /** elicitationIds of notifications/elicitation/complete received. */
  completed: string[];
  call(name: string, args?: Record<string, unknown>, opts?: { signal?: AbortSignal }): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** A real SDK client; it declares exactly the capabilities it has answers for. */
export async function peerClient(transport: Transport, answers: Answers, name = "passthrough-test"): Promise<PeerClient> {
  const client = new Client(
    { name, version: "1.0.0" },
    {
      capabilities: {
        ...(answers.sample ? { sampling: {} } : {}),
        ...(answers.elicit ? { elicitation: { form: {}, url: {} } } : {}),
        ...(answers.roots ? { roots: { listChanged: true } } : {}),
      },
    },
  );
  const asked: PeerClient["asked"] = [];
  const logs: PeerClient["logs"] = [];
  const updated: string[] = [];
  const completed: string[] = [];
  const { elicit, sample, roots } = answers;
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push({ method: req.method, params: req.params as Record<string, unknown> });
      return elicit(req.params);
    });
  }
  if (sample) {
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      asked.push({ method: req.method, params: req.params as Record<string, unknown> });
      return sample(req.params);
    });
  }
  if (roots) {
    client.setRequestHandler(ListRootsRequestSchema, async (req) => {
      asked.push({ method: req.method, params: (req.params ?? {}) as Record<string, unknown> });
      return { roots: roots() };
    });
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(n.params);
  });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updated.push(n.params.uri);
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
    completed.push(n.params.elicitationId);
  });
  await client.connect(transport);
  return {
    client,
    asked,
    logs,
    updated,
    completed,
    call: async (toolName, args = {}, opts = {}) =>
      (await client.callTool({ name: toolName, arguments: args }, undefined, opts.signal ? { signal: opts.signal } : {})) as CallToolResult,
    close: () => client.close().catch(() => undefined),
  };
}

export interface FixtureEvent {
  pid: number;
  kind: string;
  [key: string]: unknown;
}

/** The conformance fixture's events (CONFORMANCE_EVENTS file), oldest first. */
export function fixtureEvents(file: string): FixtureEvent[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as FixtureEvent);
}

/** Polls until `check` returns a value (bounded by attempts; never asserts on elapsed time). */
export async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, what: string, attempts = 400): Promise<T> {
  for (let i = 0; i < attempts; i++) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}
