/** 0-based turn indexes -> 1-based inclusive ranges, merged where consecutive. */
export function turnRanges(turnIndexes: number[]): { first: number; last: number }[] {
  const sorted = [...new Set(turnIndexes)].sort((a, b) => a - b);
  const ranges: { first: number; last: number }[] = [];
  for (const index of sorted) {
    const last = ranges.at(-1);
    if (last && last.last === index) last.last = index + 1;
    else ranges.push({ first: index + 1, last: index + 1 });
  }
  return ranges;
}
