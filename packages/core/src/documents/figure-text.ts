import { ServiceError, isServiceError } from '../errors/index.js';
import type { Ocr } from '../ports/ocr.js';

/** Longest OCR text kept for one figure. */
export const MAX_FIGURE_TEXT_CHARS = 2000;

/**
 * The text of a figure block, described inline where the figure appeared:
 * `[Figure (page N): <caption>. Description: <model's description>. Text in figure: <ocr text>]`.
 * Without a page (DOCX) the `(page N)` part is left out; without a caption, a description (no
 * vision-capable model, or it failed) or OCR text, those parts are.
 */
export function figureBlockText(page: number | null, caption: string, ocrText: string, description = ''): string {
  const where = page === null ? 'Figure' : `Figure (page ${page})`;
  const captioned = caption === '' ? where : `${where}: ${caption.replace(/[.\s]+$/, '')}`;
  const head = description === '' ? captioned : `${captioned}. Description: ${description.replace(/[.\s]+$/, '')}`;
  return ocrText === '' ? `[${head}]` : `[${head}. Text in figure: ${ocrText}]`;
}

/**
 * Runs the OCR port on one image. A rejection becomes `ocr_failed` (a `ServiceError` from the
 * port, such as `ocr_busy`, passes through); an abort rejects with the signal's reason.
 */
export async function recognize(ocr: Ocr, image: Uint8Array, signal: AbortSignal | undefined, what: string): Promise<string> {
  try {
    const result = await ocr.recognize(signal === undefined ? { image } : { image, signal });
    return typeof result?.text === 'string' ? result.text : '';
  } catch (error) {
    signal?.throwIfAborted();
    if (isServiceError(error)) throw error;
    throw new ServiceError('ocr_failed', `Text recognition failed on ${what}; wait and retry, or send a text version.`, { cause: error });
  }
}

/** OCR of a figure crop, whitespace collapsed and cut to {@link MAX_FIGURE_TEXT_CHARS}. */
export async function recognizeFigure(ocr: Ocr, png: Uint8Array, signal: AbortSignal | undefined, what: string): Promise<string> {
  return (await recognize(ocr, png, signal, what)).replace(/\s+/g, ' ').trim().slice(0, MAX_FIGURE_TEXT_CHARS);
}
