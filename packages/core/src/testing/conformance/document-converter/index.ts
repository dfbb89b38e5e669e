export {
  describeDocumentConverterConformance,
  documentSamples,
  scannedSamplePdf,
  type DocumentConverterConformanceOptions,
  type DocumentConverterConformanceTarget,
} from './document-converter-conformance.js';
export { buildDocx, buildPdf, buildZip, circularPagesPdf, docxImage, docxParagraph, type PdfPageSpec } from './build-documents.js';
