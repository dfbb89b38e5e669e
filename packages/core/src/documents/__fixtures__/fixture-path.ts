import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Ocr } from '../../ports/ocr.js';

/** Bytes of a shared real test file (`shared/fixtures/docs/<name>`, beside the repository). */
export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(fileURLToPath(new URL(`../../../../../../shared/fixtures/docs/${name}`, import.meta.url))));
}

/** An OCR port that answers every image with `text` and records the calls. */
export function scriptedOcr(text: string | ((call: number) => string)): Ocr & { calls: Uint8Array[] } {
  const calls: Uint8Array[] = [];
  return {
    specificationVersion: 'v1',
    id: 'scripted',
    calls,
    async recognize({ image }) {
      calls.push(image);
      return { text: typeof text === 'string' ? text : text(calls.length), confidence: 90 };
    },
  };
}

/** An OCR port whose engine always fails. */
export function failingOcr(): Ocr {
  return {
    specificationVersion: 'v1',
    id: 'failing',
    async recognize() {
      throw new Error('engine crashed');
    },
  };
}
