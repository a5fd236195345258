// Reading a /metrics answer with a real Prometheus text-format parser (parse-prometheus-text-format,
// a port of the Python client's parser): families by name, samples by labels.
//
// That parser folds a histogram's bucket lines into one sample and drops the labels of labelled
// histograms, so before parsing each histogram's TYPE line is declared untyped: the parser then
// reads its `_bucket`, `_sum` and `_count` series as families of their own with every label kept,
// and the declared type is kept aside (`types`).
import parsePrometheusTextFormat, { type PromFamily, type PromSample } from "parse-prometheus-text-format";

export type { PromFamily, PromSample };

export interface Scrape {
  families: Map<string, PromFamily>;
  /** The TYPE each family was declared with (counter, gauge, histogram, ...). */
  types: Map<string, string>;
  /** The samples of one family (for a histogram: NAME_bucket, NAME_sum, NAME_count) whose labels include `match`. */
  samples(name: string, match?: Record<string, string>): PromSample[];
  /** The sum of the matching samples' values; for a histogram NAME, the sum of its NAME_count samples. */
  total(name: string, match?: Record<string, string>): number;
  /** Every series of mcphub's own families, as `name{labels}`: what cardinality counts. */
  series(): string[];
}

export function parseScrape(text: string): Scrape {
  const types = new Map<string, string>();
  const declared = text.replace(/^# TYPE (\S+) (\S+)$/gm, (_line, name: string, type: string) => {
    types.set(name, type);
    return `# TYPE ${name} ${type === "histogram" ? "untyped" : type}`;
  });
  const families = new Map(parsePrometheusTextFormat(declared).map((f) => [f.name, f]));
  const samples = (name: string, match: Record<string, string> = {}) =>
    (families.get(name)?.metrics ?? []).filter((m) => Object.entries(match).every(([k, v]) => (m.labels ?? {})[k] === v));
  return {
    families,
    types,
    samples,
    total: (name, match) => samples(types.get(name) === "histogram" ? `${name}_count` : name, match).reduce((a, m) => a + Number(m.value ?? 0), 0),
    series: () => {
      const out: string[] = [];
      for (const f of families.values()) {
        if (!f.name.startsWith("mcphub_")) continue;
        for (const m of f.metrics) out.push(`${f.name}${JSON.stringify(m.labels ?? {})}`);
      }
      return out.sort();
    },
  };
}
