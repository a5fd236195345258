// The operations keys of the config (docs/operations.md): call limits per agent and per server,
// and telemetry exports (OTLP traces, the stdio gateway's opt-in metrics port). The shapes live
// here so schema.ts only names them. Every key is optional: nothing is limited and nothing is
// exported unless the config says so.
import { z } from "zod";

/** How long a call refused by a concurrency limit is told to wait before trying again. */
export const CONCURRENCY_RETRY_MS = 1000;
/** How long a call waits in a server's queue unless `queue_timeout` says otherwise. */
export const DEFAULT_QUEUE_TIMEOUT_MS = 30_000;

const count = (key: string, min: number) =>
  z
    .number({ message: `${key} must be a whole number` })
    .int(`${key} must be a whole number`)
    .min(min, `${key} must be at least ${min}`)
    .max(1_000_000, `${key} must be at most 1000000`);

/** `limits` at the top level (every agent's default, the unscoped daemon included) and under an agent. */
export const agentLimitsSchema = z.strictObject({
  /** Calls that may start in any 60-second window (a sliding window, not a token bucket). */
  calls_per_minute: count("calls_per_minute", 1).optional(),
  /** Calls of this agent that may be in flight at once (sent downstream, or waiting in a server's queue). */
  concurrent_calls: count("concurrent_calls", 1).optional(),
});

/** `limits` under a server: protects a fragile downstream from every agent together. */
export function makeServerLimitsSchema(duration: z.ZodType<number, string | number>) {
  return z.strictObject({
    /** Calls sent to this server at once, across all agents. */
    concurrent_calls: count("concurrent_calls", 1),
    /** Calls that may wait for a free slot beyond concurrent_calls; 0 (the default) refuses them at once. */
    queue: count("queue", 0).default(0),
    /** How long a call waits in the queue before it is refused. */
    queue_timeout: duration.default(DEFAULT_QUEUE_TIMEOUT_MS),
  });
}

export type AgentLimits = z.output<typeof agentLimitsSchema>;
export interface ServerLimits {
  concurrent_calls: number;
  queue: number;
  queue_timeout: number;
}

const httpUrl = (what: string, example: string) =>
  z.string().refine((u) => /^https?:\/\/[^\s/]+/i.test(u) && URL.canParse(u), `${what} must be an http(s) URL such as ${example}`);

/** `telemetry`: what a running gateway exports. */
export const telemetrySchema = z.strictObject({
  otlp: z
    .strictObject({
      /** The OTLP/HTTP traces endpoint (a collector's `/v1/traces`). Tracing is off without it. */
      url: httpUrl("telemetry.otlp.url", "http://127.0.0.1:4318/v1/traces"),
      /** Share of upstream requests traced (a request with a sampled traceparent is always traced). */
      sample: z.number().min(0, "telemetry.otlp.sample must be between 0 and 1").max(1, "telemetry.otlp.sample must be between 0 and 1").default(1),
      /** The service.name resource attribute. */
      service_name: z.string().min(1).max(128).default("mcphub"),
    })
    .optional(),
  metrics: z
    .strictObject({
      /** `mcp serve` only: serve /metrics on this loopback HOST:PORT (the daemon serves it on its own port). */
      listen: z.string().describe('HOST:PORT on loopback such as "127.0.0.1:9464"').optional(),
      /** Agents whose bearer tokens may read every series of /metrics (others see only their own). */
      scrape_agents: z.array(z.string()).optional(),
    })
    .optional(),
});

export type TelemetryConfig = z.output<typeof telemetrySchema>;
