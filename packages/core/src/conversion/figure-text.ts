/**
 * The text of a figure block, described inline where the figure appeared:
 * `[Figure (page N): <caption>. Description: <model's description>. Text in figure: <ocr text>]`.
 * Without a page (DOCX) the `(page N)` part is left out; without a caption, a description (no
 * vision-capable model, or it failed) or OCR text, those parts are. Converters write figure blocks
 * with it, and the service rewrites them with it when a model describes the figures.
 */
export function figureBlockText(page: number | null, caption: string, ocrText: string, description = ''): string {
  const where = page === null ? 'Figure' : `Figure (page ${page})`;
  const captioned = caption === '' ? where : `${where}: ${caption.replace(/[.\s]+$/, '')}`;
  const head = description === '' ? captioned : `${captioned}. Description: ${description.replace(/[.\s]+$/, '')}`;
  return ocrText === '' ? `[${head}]` : `[${head}. Text in figure: ${ocrText}]`;
}
