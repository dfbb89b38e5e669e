import type { EmbedderFingerprint, MemoryRecord, MemorySourceRef } from '../../../ports/memory-index.js';

/** Small vectors keep the suite fast on every backend while still exercising real cosine. */
export const DIMENSIONS = 16;
export const FINGERPRINT: EmbedderFingerprint = { id: 'conformance-vectors-v1:16', dimensions: DIMENSIONS };
export const OTHER_FINGERPRINT: EmbedderFingerprint = { id: 'other-embedder-v1:16', dimensions: DIMENSIONS };

export const ORG = 'org_01JCONFORMANCE0000000000001';
export const AGENT = 'agent_01JCONFORMANCE000000000001';
export const OTHER_AGENT = 'agent_01JCONFORMANCE000000000002';
export const T0 = '2026-01-01T00:00:00.000Z';

let counter = 0;
/** A fresh `mem_` id that sorts after every earlier one. */
export const memoryId = () => `mem_01JCONF${String(++counter).padStart(19, '0')}`;

/** Unit vector along `axis`. */
export function axis(index: number): Float32Array {
  const vector = new Float32Array(DIMENSIONS);
  vector[index % DIMENSIONS] = 1;
  return vector;
}

/** A unit vector whose cosine with `axis(0)` is exactly `cosine` (the rest goes to `axis(1)`). */
export function atCosine(cosine: number): Float32Array {
  const vector = new Float32Array(DIMENSIONS);
  vector[0] = cosine;
  vector[1] = Math.sqrt(1 - cosine * cosine);
  return vector;
}

/** Deterministic pseudo-random numbers (mulberry32). */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random unit vector. */
export function randomVector(next: () => number): Float32Array {
  const vector = new Float32Array(DIMENSIONS);
  let norm = 0;
  for (let i = 0; i < DIMENSIONS; i++) {
    const value = next() * 2 - 1;
    vector[i] = value;
    norm += value * value;
  }
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < DIMENSIONS; i++) vector[i]! *= scale;
  return vector;
}

export function turnSource(threadId = 'thread_01JCONF000000000000000001', observationId = 'obs_01JCONF0000000000000000001', turnIndex = 0): MemorySourceRef {
  return { kind: 'turn', threadId, observationId, turnIndex };
}

export function documentSource(sourceId: string, threadId = 'thread_01JCONF000000000000000001', observationId = 'obs_01JCONF0000000000000000002'): MemorySourceRef {
  return { kind: 'document', threadId, observationId, turnIndex: 3, sourceId, page: 2, filename: 'report.pdf' };
}

/** A valid record of `AGENT`; override anything. */
export function memory(overrides: Partial<MemoryRecord> = {}): MemoryRecord {
  return {
    id: memoryId(),
    organizationId: ORG,
    agentId: AGENT,
    text: 'Caroline went hiking in the mountains',
    keywords: '',
    vector: axis(0),
    speaker: 'Caroline',
    occurredAt: T0,
    source: turnSource(),
    createdAt: T0,
    provenance: { writer: 'conformance-writer', jobId: null, span: null },
    alsoFrom: [],
    validFrom: T0,
    validTo: null,
    supersededBy: null,
    suspicious: false,
    expiresAt: null,
    ...overrides,
  };
}

export const ids = (hits: readonly { record: { id: string } }[]) => hits.map((hit) => hit.record.id);
