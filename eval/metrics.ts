/**
 * Retrieval metrics of the evaluation (definitions: ../shared/eval-data/README.md).
 *
 * Every function here is pure: the harness flattens what `service.retrieve` returned into the
 * turns its items cite (in rank order, without repeats) and these score that list.
 */

/** `values` in order of first appearance, repeats dropped. */
export function uniqueInOrder<T>(values: Iterable<T>): T[] {
  const seen = new Set<T>();
  const out: T[] = [];
  for (const value of values) {
    if (seen.has(value)) continue;
    seen.add(value);
    out.push(value);
  }
  return out;
}

/**
 * Evidence recall@k: the share of `evidence` found among the first `k` of `ranked` (already
 * flattened and without repeats). `k` = Infinity scores the whole list (e.g. a packed context).
 * Null when there is no evidence to find.
 */
export function recallAt(ranked: readonly string[], evidence: readonly string[], k: number): number | null {
  const wanted = new Set(evidence);
  if (wanted.size === 0) return null;
  let found = 0;
  for (const item of ranked.slice(0, k)) if (wanted.has(item)) found++;
  return found / wanted.size;
}

/** recall_all@k: 1 when every one of `evidence` is among the first `k` of `ranked`, else 0; null without evidence. */
export function recallAllAt(ranked: readonly string[], evidence: readonly string[], k: number): number | null {
  const recall = recallAt(ranked, evidence, k);
  return recall === null ? null : recall === 1 ? 1 : 0;
}

/**
 * NDCG@k with binary relevance (MemPalace and the LongMemEval paper report it beside recall): the
 * discounted gain of the evidence among the first `k` of `ranked` over the best possible (every
 * piece of evidence first). Null without evidence.
 */
export function ndcgAt(ranked: readonly string[], evidence: readonly string[], k: number): number | null {
  const wanted = new Set(evidence);
  if (wanted.size === 0) return null;
  let gain = 0;
  ranked.slice(0, k).forEach((item, i) => {
    if (wanted.has(item)) gain += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(k, wanted.size); i++) ideal += 1 / Math.log2(i + 2);
  return gain / ideal;
}

/**
 * Newest-first (issue 32): 1 when the newest of the evidence (`evidenceByDate`, oldest first) ranks
 * above every older one in `ranked` (an older one not ranked at all counts as below; the newest not
 * ranked is 0), else 0. Null with fewer than two pieces of evidence (nothing can be stale).
 */
export function newestFirst(ranked: readonly string[], evidenceByDate: readonly string[]): number | null {
  const evidence = uniqueInOrder(evidenceByDate);
  if (evidence.length < 2) return null;
  const newest = ranked.indexOf(evidence[evidence.length - 1]!);
  if (newest === -1) return 0;
  return evidence.slice(0, -1).every((older) => {
    const at = ranked.indexOf(older);
    return at === -1 || at > newest;
  })
    ? 1
    : 0;
}

/** Mean of the non-null values, with how many there were (null mean when none). */
export function mean(values: readonly (number | null)[]): { mean: number | null; count: number } {
  const present = values.filter((value): value is number => value !== null);
  if (present.length === 0) return { mean: null, count: 0 };
  return { mean: present.reduce((sum, value) => sum + value, 0) / present.length, count: present.length };
}

/** The q-quantile (0..1) of `values` (nearest rank); NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** One row of a summary table: a group label and named metric means. */
export type SummaryRow = { group: string; count: number; metrics: Record<string, number | null> };

/**
 * Groups per-question metric values by `groupOf` and averages them; an "overall" row comes last.
 * `count` is the number of questions in the group (each metric averages only its non-null values).
 */
export function summarize<T>(items: readonly T[], groupOf: (item: T) => string, metricsOf: (item: T) => Record<string, number | null>, order?: readonly string[]): SummaryRow[] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groupOf(item);
    groups.set(group, [...(groups.get(group) ?? []), item]);
  }
  const names = order ? [...order.filter((name) => groups.has(name)), ...[...groups.keys()].filter((name) => !order.includes(name)).sort()] : [...groups.keys()].sort();
  const row = (group: string, members: readonly T[]): SummaryRow => {
    const values = members.map(metricsOf);
    const keys = uniqueInOrder(values.flatMap((value) => Object.keys(value)));
    return { group, count: members.length, metrics: Object.fromEntries(keys.map((key) => [key, mean(values.map((value) => value[key] ?? null)).mean])) };
  };
  return [...names.map((name) => row(name, groups.get(name)!)), row('overall', items)];
}

/** A Markdown table of summary rows (metrics as 3-decimal numbers, `-` when undefined). */
export function formatTable(rows: readonly SummaryRow[], groupTitle: string): string {
  const keys = uniqueInOrder(rows.flatMap((row) => Object.keys(row.metrics)));
  const header = `| ${groupTitle} | n | ${keys.join(' | ')} |`;
  const rule = `|${' --- |'.repeat(keys.length + 2)}`;
  const lines = rows.map((row) => `| ${row.group} | ${row.count} | ${keys.map((key) => (row.metrics[key] == null ? '-' : row.metrics[key]!.toFixed(3))).join(' | ')} |`);
  return [header, rule, ...lines].join('\n');
}
