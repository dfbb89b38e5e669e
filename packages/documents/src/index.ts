// @memory-agents/documents: the DocumentConverter for PDF, Word, HTML and the text formats.
export { DOCUMENT_FORMATS, documentConverter, type DocumentConverterOptions } from './document-converter.js';
export { convertDocument, inspectDocument, type ConvertDocumentOptions } from './convert-document.js';
