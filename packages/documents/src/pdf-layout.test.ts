import { describe, expect, it } from 'vitest';
import { groupBoxes, paintedBoxes } from './pdf-layout.js';

describe('paintedBoxes', () => {
  it('places images and paths through save/restore, transforms and forms', () => {
    // save, cm(200 0 0 100 50 60), paintImageXObject, restore, form(matrix 1 0 0 1 10 20) with a stroked path, end.
    const fnArray = [10, 12, 85, 11, 74, 91, 28, 91, 75];
    const argsArray = [null, [200, 0, 0, 100, 50, 60], ['img'], null, [[1, 0, 0, 1, 10, 20], null], [20, null, [0, 0, 30, 40]], null, [28, null, [0, 0, 999, 999]], null];
    expect(paintedBoxes({ fnArray, argsArray })).toEqual({
      images: [{ x0: 50, y0: 60, x1: 250, y1: 160 }],
      paths: [{ x0: 10, y0: 20, x1: 40, y1: 60 }],
    });
  });
});

describe('groupBoxes', () => {
  it('joins boxes within the gap, chains of them included, and orders regions top to bottom', () => {
    const boxes = [
      { x0: 0, y0: 0, x1: 10, y1: 10 },
      { x0: 15, y0: 0, x1: 25, y1: 10 },
      { x0: 30, y0: 0, x1: 40, y1: 10 },
      { x0: 0, y0: 500, x1: 10, y1: 510 },
    ];
    expect(groupBoxes(boxes, 6)).toEqual([
      { x0: 0, y0: 500, x1: 10, y1: 510 },
      { x0: 0, y0: 0, x1: 40, y1: 10 },
    ]);
    expect(groupBoxes(boxes, 1)).toHaveLength(4);
  });
});
