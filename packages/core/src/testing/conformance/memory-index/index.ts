import { describe } from 'vitest';
import { deleteByIdsCases } from './delete-by-ids.js';
import { duplicateCases } from './duplicates.js';
import { expiryCases } from './expiry.js';
import { memoryIndexCase } from './harness.js';
import { keywordCases } from './keywords.js';
import { languageCases } from './languages.js';
import { recordCases } from './records.js';
import { recordV2Cases } from './record-v2.js';
import { readYourWritesCases } from './read-your-writes.js';
import { reembedCases } from './reembed.js';
import { searchCases } from './search.js';
import type { MemoryIndexConformanceOptions } from './types.js';

export type { MemoryIndexConformanceOptions } from './types.js';

/**
 * The `MemoryIndex` conformance suite: upsert and replace, get, deleteBy (also by ids and threadIds),
 * copyAgent, stats, the embedder fingerprint, both search channels (matching, ranking, agent
 * isolation, ties, limits, a 2,000-record case), full text in German, French and Spanish, the memory record v2 (provenance, validity and flags
 * round-trip; search `asOf` / current only and `threadIds`; `list` with every filter and cursor
 * paging; `update`), expiry (`expiresAt` round-trips, search and list given `now` leave expired records out, `update` sets and clears it), `rewriteKeywords`, near-duplicate lookup (`findDuplicates`), read-your-writes (a batch found by its exact texts at once), re-embedding (a target generation, pending records, the switch to fewer or more dimensions, a switch back, a resume) and, when `create` returns `reopen`, persistence through a second instance.
 *
 * @example
 * describeMemoryIndexConformance({ name: 'in-memory', create: async () => ({ port: inMemoryMemoryIndex() }) });
 */
export function describeMemoryIndexConformance(options: MemoryIndexConformanceOptions): void {
  describe(`MemoryIndex conformance: ${options.name}`, () => {
    const test = memoryIndexCase(options);
    recordCases(test);
    deleteByIdsCases(test);
    keywordCases(test);
    searchCases(test);
    languageCases(test);
    recordV2Cases(test);
    expiryCases(test);
    readYourWritesCases(test);
    duplicateCases(test);
    reembedCases(test);
  });
}
