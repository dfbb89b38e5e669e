export { describeOcrConformance, type OcrConformanceOptions, type OcrConformanceTarget } from './ocr-conformance.js';
export { renderTextImage, type RenderTextImageOptions } from './render-text-image.js';
