import { textDocumentConverter } from '../../../conversion/text-document-converter.js';
import { describeDocumentConverterConformance } from './document-converter-conformance.js';

// Core's built-in converter: the text formats only; PDF, Word and HTML must be refused.
describeDocumentConverterConformance({ name: 'textDocumentConverter', create: async () => ({ port: textDocumentConverter() }) });
