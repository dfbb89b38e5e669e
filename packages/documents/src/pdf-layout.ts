/**
 * Geometry read from pdf.js operator lists: where images and vector paths are painted on a page,
 * grouped into figure regions. Coordinates are PDF user space (points, origin bottom-left).
 */

/** An axis-aligned rectangle in PDF user space. */
export type Box = { x0: number; y0: number; x1: number; y1: number };

/**
 * pdf.js `OPS` codes used here. They are pinned by pdf-parse's exact pdfjs-dist version and checked
 * by a test against a real scan (if pdf.js renumbers them, that test fails).
 */
const OPS = {
  save: 10,
  restore: 11,
  transform: 12,
  paintFormXObjectBegin: 74,
  paintFormXObjectEnd: 75,
  paintImageMaskXObject: 83,
  paintImageMaskXObjectGroup: 84,
  paintImageXObject: 85,
  paintInlineImageXObject: 86,
  paintInlineImageXObjectGroup: 87,
  paintImageXObjectRepeat: 88,
  paintImageMaskXObjectRepeat: 89,
  paintSolidColorImageMask: 90,
  constructPath: 91,
  endPath: 28,
} as const;

type Matrix = [number, number, number, number, number, number];

function multiply(m: Matrix, n: Matrix): Matrix {
  // Result = n applied first, then m (PDF `cm` semantics: CTM' = n x CTM).
  return [
    n[0] * m[0] + n[1] * m[2],
    n[0] * m[1] + n[1] * m[3],
    n[2] * m[0] + n[3] * m[2],
    n[2] * m[1] + n[3] * m[3],
    n[4] * m[0] + n[5] * m[2] + m[4],
    n[4] * m[1] + n[5] * m[3] + m[5],
  ];
}

function unitSquareBox(m: Matrix): Box {
  const xs = [m[4], m[0] + m[4], m[2] + m[4], m[0] + m[2] + m[4]];
  const ys = [m[5], m[1] + m[5], m[3] + m[5], m[1] + m[3] + m[5]];
  return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
}

function asMatrix(value: unknown): Matrix | null {
  if (value === null || value === undefined || typeof value !== 'object') return null;
  const array = Array.from(value as ArrayLike<number>);
  if (array.length !== 6 || array.some((item) => typeof item !== 'number' || !Number.isFinite(item))) return null;
  return array as Matrix;
}

function transformBox(m: Matrix, box: Box): Box {
  const corners = [
    [box.x0, box.y0],
    [box.x1, box.y0],
    [box.x0, box.y1],
    [box.x1, box.y1],
  ].map(([x = 0, y = 0]) => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]] as const);
  const xs = corners.map((corner) => corner[0]);
  const ys = corners.map((corner) => corner[1]);
  return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
}

/**
 * Boxes of what an operator list paints: `images` (raster images) and `paths` (filled or stroked
 * vector paths; clipping-only paths are left out), in user space. Forms and save/restore are
 * followed.
 */
export function paintedBoxes(operatorList: { fnArray: ArrayLike<number>; argsArray: ArrayLike<unknown> }): { images: Box[]; paths: Box[] } {
  const boxes: Box[] = [];
  const paths: Box[] = [];
  let ctm: Matrix = [1, 0, 0, 1, 0, 0];
  const stack: Matrix[] = [];
  const { fnArray, argsArray } = operatorList;
  for (let index = 0; index < fnArray.length; index++) {
    const fn = fnArray[index];
    const args = argsArray[index] as unknown[] | null | undefined;
    switch (fn) {
      case OPS.save:
        stack.push(ctm);
        break;
      case OPS.restore:
        ctm = stack.pop() ?? ctm;
        break;
      case OPS.transform: {
        const m = asMatrix(args);
        if (m !== null) ctm = multiply(ctm, m);
        break;
      }
      case OPS.paintFormXObjectBegin: {
        stack.push(ctm);
        const m = asMatrix(args?.[0]);
        if (m !== null) ctm = multiply(ctm, m);
        break;
      }
      case OPS.paintFormXObjectEnd:
        ctm = stack.pop() ?? ctm;
        break;
      case OPS.paintImageXObject:
      case OPS.paintInlineImageXObject:
      case OPS.paintImageMaskXObject:
      case OPS.paintSolidColorImageMask:
        boxes.push(unitSquareBox(ctm));
        break;
      case OPS.paintImageXObjectRepeat:
      case OPS.paintImageMaskXObjectRepeat: {
        // args: [image, scaleX, scaleY, positions (x, y pairs)] for the XObject variant.
        const scaleX = typeof args?.[1] === 'number' ? args[1] : 1;
        const scaleY = typeof args?.[2] === 'number' ? args[2] : 1;
        const positions = args?.[3];
        if (positions !== null && typeof positions === 'object' && 'length' in (positions as object)) {
          const list = Array.from(positions as ArrayLike<number>);
          for (let at = 0; at + 1 < list.length; at += 2) {
            boxes.push(unitSquareBox(multiply(ctm, [scaleX, 0, 0, scaleY, list[at] ?? 0, list[at + 1] ?? 0])));
          }
        } else boxes.push(unitSquareBox(ctm));
        break;
      }
      case OPS.paintInlineImageXObjectGroup:
      case OPS.paintImageMaskXObjectGroup: {
        const map = fn === OPS.paintInlineImageXObjectGroup ? args?.[1] : args?.[0];
        if (Array.isArray(map)) {
          for (const entry of map as Array<{ transform?: unknown }>) {
            const m = asMatrix(entry?.transform);
            boxes.push(unitSquareBox(m === null ? ctm : multiply(ctm, m)));
          }
        } else boxes.push(unitSquareBox(ctm));
        break;
      }
      case OPS.constructPath: {
        // args: [painting op, path data, [minX, minY, maxX, maxY]] (pdf.js 5).
        if (args?.[0] === OPS.endPath) break;
        const minMax = args?.[2];
        if (minMax === null || minMax === undefined || typeof minMax !== 'object') break;
        const [x0, y0, x1, y1] = Array.from(minMax as ArrayLike<number>);
        if (![x0, y0, x1, y1].every((value) => typeof value === 'number' && Number.isFinite(value))) break;
        paths.push(transformBox(ctm, { x0: x0 as number, y0: y0 as number, x1: x1 as number, y1: y1 as number }));
        break;
      }
      default:
        break;
    }
  }
  return { images: boxes, paths };
}

/** Intersection of a box with the page, or `null` when they do not overlap. */
export function clip(box: Box, page: Box): Box | null {
  const clipped = { x0: Math.max(box.x0, page.x0), y0: Math.max(box.y0, page.y0), x1: Math.min(box.x1, page.x1), y1: Math.min(box.y1, page.y1) };
  return clipped.x1 > clipped.x0 && clipped.y1 > clipped.y0 ? clipped : null;
}

export function area(box: Box): number {
  return Math.max(0, box.x1 - box.x0) * Math.max(0, box.y1 - box.y0);
}

function near(a: Box, b: Box, gap: number): boolean {
  return a.x0 - gap <= b.x1 && b.x0 - gap <= a.x1 && a.y0 - gap <= b.y1 && b.y0 - gap <= a.y1;
}

function union(a: Box, b: Box): Box {
  return { x0: Math.min(a.x0, b.x0), y0: Math.min(a.y0, b.y0), x1: Math.max(a.x1, b.x1), y1: Math.max(a.y1, b.y1) };
}

/**
 * Groups boxes that touch or lie within `gap` points of each other into regions (a figure made
 * of many image tiles or strokes is one region): connected components first (one O(n²) pass with
 * union-find), then regions whose bounds still overlap are merged until none do. Deterministic:
 * regions are ordered top to bottom, then left to right.
 */
export function groupBoxes(boxes: Box[], gap: number): Box[] {
  const parent = boxes.map((_, index) => index);
  const find = (index: number): number => {
    let root = index;
    while (parent[root] !== root) root = parent[root] ?? root;
    let current = index;
    while (parent[current] !== root) {
      const next = parent[current] ?? root;
      parent[current] = root;
      current = next;
    }
    return root;
  };
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i];
      const b = boxes[j];
      if (a !== undefined && b !== undefined && near(a, b, gap)) {
        const rootA = find(i);
        const rootB = find(j);
        if (rootA !== rootB) parent[Math.max(rootA, rootB)] = Math.min(rootA, rootB);
      }
    }
  }
  const components = new Map<number, Box>();
  boxes.forEach((box, index) => {
    const root = find(index);
    const existing = components.get(root);
    components.set(root, existing === undefined ? { ...box } : union(existing, box));
  });
  let regions = [...components.values()];
  // Each pass merges at least one pair or stops; there are few components, so this is cheap.
  for (let merged = true; merged && regions.length > 1; ) {
    merged = false;
    const next: Box[] = [];
    for (const region of regions) {
      const index = next.findIndex((other) => near(region, other, gap));
      if (index === -1) next.push(region);
      else {
        next[index] = union(next[index] as Box, region);
        merged = true;
      }
    }
    regions = next;
  }
  return regions.sort((a, b) => b.y1 - a.y1 || a.x0 - b.x0);
}
