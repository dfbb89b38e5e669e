import { readFileSync } from 'node:fs';
import { hasShared, sharedPath } from '../../__fixtures__/shared-data.js';

/** Whether the shared real documents are beside the repository (absent in a clone; see `hasShared`). */
export const SHARED_DOCS = hasShared('fixtures/docs', 'tests on the shared real documents');

/** Bytes of a shared real test file (`../shared/fixtures/docs/<name>`, beside the repository). */
export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(sharedPath(`fixtures/docs/${name}`)));
}
