import { readFileSync } from 'node:fs';
import type { Ocr } from '@memory-agents/core';
import { hasShared, sharedPath } from './shared-data.js';

/** Whether the shared real documents are beside the repository (absent in a clone; see `hasShared`). */
export const SHARED_DOCS = hasShared('fixtures/docs', 'tests on the shared real documents');

/** Bytes of a shared real test file (`../shared/fixtures/docs/<name>`, beside the repository). */
export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(sharedPath(`fixtures/docs/${name}`)));
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
