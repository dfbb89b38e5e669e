/** Options of {@link renderTextImage}. */
export type RenderTextImageOptions = {
  /** Lines of text, drawn black on white, one below the other. */
  lines: string[];
  /**
   * Font size in pixels.
   * @default 40
   */
  fontSize?: number;
  /**
   * Image width in pixels.
   * @default 1200
   */
  width?: number;
};

/**
 * Renders lines of text to PNG bytes, for OCR tests. `@napi-rs/canvas` is imported on first call,
 * so merely importing `@memory-agents/core/testing` never loads the native module.
 *
 * @example
 * ```ts
 * const image = await renderTextImage({ lines: ['Invoice 2024-001 total 123.45 EUR'] });
 * const { text } = await ocr.recognize({ image });
 * ```
 */
export async function renderTextImage({ lines, fontSize = 40, width = 1200 }: RenderTextImageOptions): Promise<Uint8Array> {
  const { createCanvas } = await import('@napi-rs/canvas');
  const lineHeight = Math.round(fontSize * 1.6);
  const margin = fontSize;
  const canvas = createCanvas(width, Math.max(1, lines.length) * lineHeight + 2 * margin);
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.fillStyle = '#000000';
  context.font = `${fontSize}px sans-serif`;
  context.textBaseline = 'top';
  lines.forEach((line, index) => context.fillText(line, margin, margin + index * lineHeight));
  return new Uint8Array(await canvas.encode('png'));
}
