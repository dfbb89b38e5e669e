import { expect } from 'vitest';
import type { MemoryRecord } from '../../../ports/memory-index.js';
import { AGENT, FINGERPRINT, OTHER_AGENT, ORG, T0, memory, random, randomVector, turnSource } from './fixtures.js';
import type { MemoryIndexCase } from './types.js';

const JOB = 'obs_01JCONFRYW000000000000001';
const THREAD = 'thread_01JCONFRYW00000000000001';

/**
 * Read-your-writes (issue 33): once learning's upsert resolved, each memory it wrote is found by a
 * search for its exact text (lexical channel) and its own vector (semantic channel), among the
 * agent's earlier memories and another agent's, and is listed under its observation id.
 */
export function readYourWritesCases(test: MemoryIndexCase): void {
  test('read-your-writes: a committed batch is found by its exact texts and vectors at once', async ({ index }) => {
    const next = random(33);
    const topics = ['the garden shed', 'the quarterly budget', 'the bicycle repair', 'the piano lessons', 'the office move'];
    const earlier = Array.from({ length: 40 }, (_, i) =>
      memory({ text: `A note about ${topics[i % topics.length]} number ${i}`, vector: randomVector(next), createdAt: T0 }),
    );
    const stranger = memory({ agentId: OTHER_AGENT, organizationId: ORG, text: 'Marguerite keeps bees behind the old mill in Ghent', vector: randomVector(next) });
    await index.upsert({ records: [...earlier, stranger], embedder: FINGERPRINT });

    const texts = [
      'Marguerite keeps bees behind the old mill in Ghent',
      'The quarterly budget review moved to Thursday afternoon',
      'Tobias repaired the bicycle chain with a borrowed tool',
      'Our piano teacher Ilse retired after forty years',
    ];
    // As learning writes them: `mem_<job>_<turn>_<piece>`, a fresh job's ids (newIds).
    const batch: MemoryRecord[] = texts.map((text, turn) =>
      memory({
        id: `mem_${JOB.slice(4)}_${turn}_0`,
        text,
        vector: randomVector(next),
        source: turnSource(THREAD, JOB, turn),
        provenance: { writer: 'conformance-writer', jobId: JOB, span: { start: 0, end: text.length } },
        createdAt: '2026-01-02T00:00:00.000Z',
      }),
    );
    await index.upsert({ records: batch, embedder: FINGERPRINT, newIds: true });

    for (const record of batch) {
      const { lexical, semantic } = await index.search({ agentId: AGENT, text: record.text, vector: record.vector, limit: 5 });
      expect(lexical.map((hit) => hit.record.id), record.text).toContain(record.id);
      expect(semantic[0]?.record.id, record.text).toBe(record.id);
      expect([...lexical, ...semantic].every((hit) => hit.record.agentId === AGENT)).toBe(true);
    }
    const listed = await index.list({ agentId: AGENT, observationId: JOB, limit: 100 });
    expect(listed.records.map((record) => record.id).sort()).toEqual(batch.map((record) => record.id).sort());
  });
}
