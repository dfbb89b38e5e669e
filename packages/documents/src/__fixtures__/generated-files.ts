/**
 * Files for document tests: the pure builders of `@memory-agents/core/testing` (PDF, ZIP, DOCX)
 * plus images drawn with `@napi-rs/canvas` (scanned pages, figures).
 */
import { createCanvas } from '@napi-rs/canvas';

export { buildDocx, buildPdf, buildZip, circularPagesPdf, docxImage, docxParagraph } from '@memory-agents/core/testing';

/** Draws lines of black text on white and returns JPEG bytes. */
export async function textImage(lines: string[], width = 900, height = 220): Promise<Uint8Array> {
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, width, height);
  context.fillStyle = '#000000';
  context.font = '36px sans-serif';
  lines.forEach((line, index) => context.fillText(line, 30, 70 + index * 60));
  return new Uint8Array(await canvas.encode('jpeg', 90));
}

/** PNG bytes of lines of text on white. */
export async function textPng(lines: string[], width = 400, height = 120): Promise<Uint8Array> {
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, width, height);
  context.fillStyle = '#000000';
  context.font = '28px sans-serif';
  lines.forEach((line, index) => context.fillText(line, 10, 40 + index * 40));
  return new Uint8Array(await canvas.encode('png'));
}

