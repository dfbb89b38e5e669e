// Scoring helpers for OCR accuracy (ocr-tesseract's accuracy test, bench/ocr-accuracy.ts,
// bench/document-ingest.ts): character error rate against a reference, and PDF pages as images.

/** How text is prepared before scoring. */
export type NormalizeOptions = {
  /**
   * Keep letter case. When false, both texts are lower-cased first, so `LOCATE` read as `Locate`
   * costs nothing.
   * @default true
   */
  isCaseSensitive?: boolean;
};

/**
 * Prepares text for scoring: Unicode NFKC (ligatures and full-width forms become plain letters),
 * every run of whitespace (line breaks, blank lines, column gaps) becomes one space, and the ends
 * are trimmed. Punctuation and letters are kept as they are, so they count as errors.
 */
export function normalizeForScoring(text: string, { isCaseSensitive = true }: NormalizeOptions = {}): string {
  const normalized = text.normalize('NFKC').replace(/\s+/gu, ' ').trim();
  return isCaseSensitive ? normalized : normalized.toLowerCase();
}

/** Edit distance (insertions, deletions, substitutions; each costs 1) between two strings, by code point. */
export function levenshtein(a: string, b: string): number {
  const source = Array.from(a);
  const target = Array.from(b);
  if (source.length === 0) return target.length;
  let previous = new Uint32Array(target.length + 1).map((_, index) => index);
  let current = new Uint32Array(target.length + 1);
  for (let i = 1; i <= source.length; i += 1) {
    current[0] = i;
    for (let j = 1; j <= target.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (source[i - 1] === target[j - 1] ? 0 : 1);
      current[j] = Math.min(substitution, (previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1);
    }
    [previous, current] = [current, previous];
  }
  return previous[target.length] ?? 0;
}

/**
 * Character error rate: the edit distance between the normalised OCR output and the normalised
 * reference, divided by the reference's length in code points. 0 is perfect; it can exceed 1.
 */
export function characterErrorRate(hypothesis: string, reference: string, options: NormalizeOptions = {}): number {
  const normalizedReference = normalizeForScoring(reference, options);
  const distance = levenshtein(normalizeForScoring(hypothesis, options), normalizedReference);
  return distance / Math.max(1, Array.from(normalizedReference).length);
}

/** Options of {@link renderPdfPages}. */
export type RenderPdfPagesOptions = {
  /**
   * Render scale; 1 is 72 dpi, so `300 / 72` renders at 300 dpi.
   * @default 300 / 72
   */
  scale?: number;
  /** 1-based page numbers; all pages when omitted. */
  pages?: number[];
};

/**
 * Renders PDF pages to PNG bytes with pdf-parse (pdf.js + @napi-rs/canvas), optional peer
 * dependencies imported on first call: install them in the package that runs it.
 */
export async function renderPdfPages(
  pdf: Uint8Array,
  { scale = 300 / 72, pages }: RenderPdfPagesOptions = {},
): Promise<Array<{ pageNumber: number; image: Uint8Array; width: number; height: number }>> {
  const { PDFParse } = await import('pdf-parse');
  const parser = new PDFParse({ data: pdf.slice() });
  try {
    const screenshots = await parser.getScreenshot({
      scale,
      imageBuffer: true,
      imageDataUrl: false,
      ...(pages === undefined ? {} : { partial: pages }),
    });
    return screenshots.pages.map((page) => ({
      pageNumber: page.pageNumber,
      image: new Uint8Array(page.data),
      width: page.width,
      height: page.height,
    }));
  } finally {
    await parser.destroy();
  }
}
