export { tesseractOcr, type TesseractOcrOptions } from './tesseract-ocr.js';
