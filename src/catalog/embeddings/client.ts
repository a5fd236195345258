// The HTTP client of an OpenAI-compatible embeddings API (OpenAI, Ollama, llama.cpp server, LM
// Studio, vLLM all answer `POST {base}/embeddings`). It knows nothing about tools or ranking: texts
// in, unit-length vectors out. Errors say what went wrong in one line and never carry the API key
// or the texts sent.
import { z } from "zod";

/** One request carries at most this many texts (servers cap batch sizes; 64 is safe for all of them). */
export const MAX_BATCH = 64;
/** A response body larger than this is refused (a batch of 64 × 8,192 floats as JSON is ~10 MB). */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export class EmbeddingsError extends Error {
  override name = "EmbeddingsError";
}

export interface EmbeddingsEndpoint {
  /** The API base, e.g. http://localhost:11434/v1. */
  url: string;
  model: string;
  dimensions?: number;
  /** Resolved lazily (it may come from the vault); undefined = no Authorization header. */
  apiKey?: () => Promise<string | undefined>;
}

const Response = z.object({
  data: z.array(z.object({ embedding: z.array(z.number()), index: z.number().int().nonnegative().optional() })),
});

/** Scales a vector to unit length (cosine similarity becomes a dot product); a zero vector stays zero. */
export function normalise(v: ArrayLike<number>): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  const out = new Float32Array(v.length);
  const norm = Math.sqrt(sum);
  if (norm === 0 || !Number.isFinite(norm)) return out;
  for (let i = 0; i < v.length; i++) out[i] = (v[i] as number) / norm;
  return out;
}

function endpointUrl(base: string): string {
  return `${base.replace(/\/+$/u, "")}/embeddings`;
}

export class EmbeddingsClient {
  constructor(private readonly endpoint: EmbeddingsEndpoint) {}

  get model(): string {
    return this.endpoint.model;
  }

  /**
   * Embeds `texts` (any number; sent in batches of MAX_BATCH) and returns unit vectors in order.
   * Every vector must have the same length (and `dimensions`, when configured).
   */
  async embed(texts: readonly string[], opts: { timeoutMs: number; signal?: AbortSignal }): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += MAX_BATCH) {
      out.push(...(await this.batch(texts.slice(i, i + MAX_BATCH), opts)));
    }
    return out;
  }

  private async batch(texts: readonly string[], opts: { timeoutMs: number; signal?: AbortSignal }): Promise<Float32Array[]> {
    const { url, model, dimensions } = this.endpoint;
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    const key = await this.endpoint.apiKey?.();
    if (key) headers["authorization"] = `Bearer ${key}`;
    const body = JSON.stringify({ model, input: texts, encoding_format: "float", ...(dimensions !== undefined ? { dimensions } : {}) });
    const signals = [AbortSignal.timeout(opts.timeoutMs), ...(opts.signal ? [opts.signal] : [])];
    let res: globalThis.Response;
    try {
      res = await fetch(endpointUrl(url), { method: "POST", headers, body, signal: AbortSignal.any(signals) });
    } catch (err) {
      const e = err as Error;
      if (e.name === "TimeoutError") throw new EmbeddingsError(`no answer from ${endpointUrl(url)} within ${opts.timeoutMs} ms`);
      if (e.name === "AbortError") throw new EmbeddingsError("the request was cancelled");
      const cause = (e as Error & { cause?: { code?: string; message?: string } }).cause;
      throw new EmbeddingsError(`cannot reach ${endpointUrl(url)}: ${cause?.code ?? cause?.message ?? e.message}`);
    }
    const text = await readBounded(res);
    if (!res.ok) {
      // A server may quote the key back in its error ("incorrect API key sk-..."): never pass it on.
      const said = key ? summarise(text).split(key).join("[redacted]") : summarise(text);
      throw new EmbeddingsError(`${endpointUrl(url)} answered HTTP ${res.status}${said}`);
    }
    let parsed: z.infer<typeof Response>;
    try {
      parsed = Response.parse(JSON.parse(text));
    } catch {
      throw new EmbeddingsError(`${endpointUrl(url)} did not answer with OpenAI-style embeddings ({data: [{embedding: [...]}]})`);
    }
    if (parsed.data.length !== texts.length) {
      throw new EmbeddingsError(`${endpointUrl(url)} returned ${parsed.data.length} embeddings for ${texts.length} inputs`);
    }
    const ordered = parsed.data.map((d, i) => ({ at: d.index ?? i, v: d.embedding })).sort((a, b) => a.at - b.at);
    const dim = ordered[0]?.v.length ?? 0;
    if (dim === 0) throw new EmbeddingsError(`${endpointUrl(url)} returned empty embeddings`);
    if (dimensions !== undefined && dim !== dimensions) {
      throw new EmbeddingsError(`model ${model} returned ${dim}-dimensional vectors, but dimensions is ${dimensions}`);
    }
    return ordered.map((d) => {
      if (d.v.length !== dim) throw new EmbeddingsError(`${endpointUrl(url)} returned vectors of different lengths`);
      return normalise(d.v);
    });
  }
}

async function readBounded(res: globalThis.Response): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? "0");
  if (declared > MAX_RESPONSE_BYTES) throw new EmbeddingsError(`the embeddings response is too large (${declared} bytes)`);
  const buf = Buffer.from(await res.arrayBuffer());
  if (buf.length > MAX_RESPONSE_BYTES) throw new EmbeddingsError(`the embeddings response is too large (${buf.length} bytes)`);
  return buf.toString("utf8");
}

/** The server's own error message, if it gave one in the usual {error: {message}} shape (one line, clipped). */
function summarise(body: string): string {
  try {
    const j = JSON.parse(body) as { error?: { message?: unknown } | string };
    const msg = typeof j.error === "string" ? j.error : typeof j.error?.message === "string" ? j.error.message : undefined;
    if (msg) return `: ${msg.replace(/\s+/gu, " ").slice(0, 200)}`;
  } catch {
    // not JSON: say nothing more (an HTML error page is noise)
  }
  return "";
}
