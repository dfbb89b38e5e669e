import { ServiceError, isServiceError, type Ocr } from '@memory-agents/core';

/** Longest OCR text kept for one figure. */
export const MAX_FIGURE_TEXT_CHARS = 2000;

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
