// The buckets of the inspector's charts (charts.ts): pure, so they are tested without a page.

export type Bar = { label: string; value: number };

/** `2024-01-10` (UTC day) or `2024-01` (month) buckets between the first and the last moment, empty ones included. */
export function buckets(moments: { at: string; value: number }[]): Bar[] {
  if (moments.length === 0) return [];
  const times = moments.map((moment) => Date.parse(moment.at));
  const first = Math.min(...times);
  const last = Math.max(...times);
  const daily = last - first <= 62 * 86_400_000;
  const key = (time: number) => new Date(time).toISOString().slice(0, daily ? 10 : 7);
  const bars = new Map<string, number>();
  for (let time = first; key(time) <= key(last); ) {
    bars.set(key(time), 0);
    const next = new Date(time);
    if (daily) next.setUTCDate(next.getUTCDate() + 1);
    else next.setUTCMonth(next.getUTCMonth() + 1, 1);
    time = next.getTime();
  }
  moments.forEach((moment, i) => bars.set(key(times[i]!), (bars.get(key(times[i]!)) ?? 0) + moment.value));
  return [...bars].map(([label, value]) => ({ label, value: Math.round(value * 1e6) / 1e6 }));
}

