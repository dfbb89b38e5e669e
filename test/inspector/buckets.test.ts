import { describe, expect, it } from 'vitest';
import { buckets } from '../../packages/server/inspector/buckets.js';

// The buckets behind the inspector's charts (memories learned, credits charged): per UTC day with
// the empty days between shown, per month once the data spans more than two months.

describe('inspector chart buckets', () => {
  it('counts per UTC day, with the empty days between as zero bars', () => {
    const bars = buckets([
      { at: '2024-03-01T23:30:00.000Z', value: 1 },
      { at: '2024-03-01T01:00:00.000Z', value: 1 },
      { at: '2024-03-04T00:00:00.000Z', value: 2 },
    ]);
    expect(bars).toEqual([
      { label: '2024-03-01', value: 2 },
      { label: '2024-03-02', value: 0 },
      { label: '2024-03-03', value: 0 },
      { label: '2024-03-04', value: 2 },
    ]);
  });

  it('sums decimal amounts without float noise', () => {
    expect(buckets([0.1, 0.2, 0.011].map((value) => ({ at: '2024-03-01T10:00:00.000Z', value })))).toEqual([{ label: '2024-03-01', value: 0.311 }]);
  });

  it('counts per month past two months of data, empty months included', () => {
    const bars = buckets([
      { at: '2024-01-31T12:00:00.000Z', value: 1 },
      { at: '2024-04-20T12:00:00.000Z', value: 3 },
    ]);
    expect(bars).toEqual([
      { label: '2024-01', value: 1 },
      { label: '2024-02', value: 0 },
      { label: '2024-03', value: 0 },
      { label: '2024-04', value: 3 },
    ]);
  });

  it('has no bars for no data', () => {
    expect(buckets([])).toEqual([]);
  });
});
