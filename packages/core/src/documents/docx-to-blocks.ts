import { ServiceError } from '../errors/index.js';
import { htmlToBlocks } from './html-to-blocks.js';
import type { ResolvedLimits } from './limits.js';
import type { DocumentBlock } from './types.js';
import { readZipEntries } from './zip-entries.js';

/**
 * Converts a DOCX with mammoth (`convertToHtml`, default style map: Heading N -> `<hN>`), then the
 * HTML to blocks. Tables become `a | b` rows; footnotes and endnotes (mammoth renders them as a
 * list at the end) are kept; images are left out.
 */
export async function convertDocx(bytes: Uint8Array, limits: ResolvedLimits): Promise<DocumentBlock[]> {
  const entries = readZipEntries(bytes);
  if (entries === null) throw new ServiceError('malformed_document', 'The Word document could not be read: its ZIP structure is damaged; export it again.');
  const inflated = entries.reduce((sum, entry) => sum + entry.uncompressedSize, 0);
  if (inflated > limits.maxUncompressedBytes) {
    throw new ServiceError('document_too_complex', `The Word document inflates to ${inflated} bytes; the converter unpacks at most ${limits.maxUncompressedBytes}. Split it or send a text version.`);
  }
  // Loaded on first use, like the PDF reader.
  const { default: mammoth } = await import('mammoth');
  let html: string;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      { convertImage: mammoth.images.imgElement(async () => ({ src: '' })) },
    );
    // Drop mammoth's "↑" back-links from each footnote/endnote to its reference.
    html = result.value.replace(/<a href="#(?:footnote|endnote)-ref-[^"]*">[^<]*<\/a>/g, '');
  } catch (error) {
    throw new ServiceError('malformed_document', 'The Word document could not be read; open it in Word and save it again.', { cause: error });
  }
  return htmlToBlocks(html, { mainContentOnly: false });
}
