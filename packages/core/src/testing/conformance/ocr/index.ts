export { describeOcrConformance, type OcrConformanceOptions, type OcrConformanceTarget } from './ocr-conformance.js';
export { renderTextImage, type RenderTextImageOptions } from './render-text-image.js';
export { characterErrorRate, levenshtein, normalizeForScoring, renderPdfPages, type NormalizeOptions, type RenderPdfPagesOptions } from './ocr-scoring.js';
