// Parsing of the human-friendly units used in config and CLI flags: Go-style durations
// ("30s", "1h30m", "500ms", "7d") and byte sizes ("32KB", "900B", 8192).

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** Parses a duration to milliseconds; returns undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (t === "0") return 0;
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(t)) return undefined;
  let total = 0;
  for (const part of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)) {
    const n = Number(part[1]);
    const unit = DURATION_UNITS[part[2] ?? ""];
    if (unit === undefined || !Number.isFinite(n)) return undefined;
    total += n * unit;
  }
  return Math.round(total);
}

/**
 * Why a look-back window ("the last 7d") cannot be used, or undefined: one reaching back before
 * 1970 has no date to start from.
 */
export function lookBackProblem(ms: number, now = Date.now()): string | undefined {
  if (ms <= now) return undefined;
  return `reaches back before 1970 (the longest window today is ${Math.floor(now / 86_400_000)}d); give a shorter one such as 30d`;
}

/** Formats milliseconds back into the shortest readable duration ("1h30m", "250ms"). */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  if (ms < 1000) return `${ms}ms`;
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      parts.push(`${n}${unit}`);
      rest -= n * size;
    }
  }
  if (rest > 0) parts.push(`${rest}ms`);
  return parts.join("");
}

const BYTE_UNITS: Record<string, number> = {
  B: 1,
  KB: 1024,
  KIB: 1024,
  K: 1024,
  MB: 1024 ** 2,
  MIB: 1024 ** 2,
  M: 1024 ** 2,
  GB: 1024 ** 3,
  GIB: 1024 ** 3,
  G: 1024 ** 3,
};

/** Parses a byte size ("32KB", "900B", "8 KiB", 4096) to bytes; undefined when malformed. */
export function parseBytes(value: string | number): number | undefined {
  if (typeof value === "number") return Number.isInteger(value) && value >= 0 ? value : undefined;
  const t = value.trim().toUpperCase();
  if (t === "" || t === "0") return 0;
  const m = /^(\d+(?:\.\d+)?)\s*([A-Z]*)$/.exec(t);
  if (!m) return undefined;
  const unit = m[2] === "" ? 1 : BYTE_UNITS[m[2] ?? ""];
  if (unit === undefined) return undefined;
  const n = Math.round(Number(m[1]) * unit);
  return Number.isFinite(n) ? n : undefined;
}

/** Formats bytes for humans: 512 B, 32 KiB, 1.5 MiB. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${trim(n / 1024)} KiB`;
  if (n < 1024 ** 3) return `${trim(n / 1024 ** 2)} MiB`;
  return `${trim(n / 1024 ** 3)} GiB`;
}

function trim(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(1);
}

/** Token estimate used everywhere (stats, budget report): ceil(bytes / 4). */
export function estimateTokens(bytes: number): number {
  return bytes <= 0 ? 0 : Math.ceil(bytes / 4);
}
