import { describe, expect, it } from 'vitest';
import type { MemoryRecord } from '../../../ports/memory-index.js';
import type { MemoryWriteRequest, MemoryWriter, TurnOutcome, WriterTurn } from '../../../ports/memory-writer.js';

/** What `create()` of {@link describeMemoryWriterConformance} returns: one fresh writer. */
export type MemoryWriterConformanceTarget = {
  /** The writer under test. */
  port: MemoryWriter;
  /** Releases what `create()` started (a scripted provider, a process); runs even when a test fails. */
  cleanup?: () => Promise<void>;
  /**
   * Makes the next `write` fail at least its first turn (e.g. the provider answers one call with a
   * 500). When given, the failure tests run; a writer that cannot fail (no model, no I/O) leaves it out.
   */
  failNextWrite?: () => void;
  /**
   * Makes the next `write` hang until it is aborted (a stalled provider). When given, the test that
   * aborts a pending write runs; a writer that never waits has nothing to abort and leaves it out.
   */
  stallNextWrite?: () => void;
};

/** Options of {@link describeMemoryWriterConformance}. */
export type MemoryWriterConformanceOptions = {
  /** Names the `describe` block, e.g. `'llmMemoryWriter (scripted provider)'`. */
  name: string;
  /** Builds a fresh writer; called once per test. */
  create: () => Promise<MemoryWriterConformanceTarget>;
};

const THREAD = 'thr_conformance';

/** Consecutive turns of one job, starting at `first` (a later batch of the job need not start at 0). */
const turns = (first: number, texts: string[], speaker = 'Ana'): WriterTurn[] =>
  texts.map((text, position) => {
    const turnIndex = first + position;
    return {
      turnIndex,
      speaker,
      text,
      timestamp: `2024-05-0${4 + position}T10:00:00.000Z`,
      tags: [],
      source: { kind: 'turn', threadId: THREAD, observationId: `obs_${turnIndex}`, turnIndex },
    };
  });

const FACTS = ['I moved to Lisbon in May.', 'My sister Marta works as a nurse in Porto.', 'We adopted a cat called Miso last week.'];

const existing = (id: string, text: string): MemoryRecord => ({
  id,
  organizationId: 'org_conformance',
  agentId: 'agt_conformance',
  text,
  keywords: '',
  vector: new Float32Array(2),
  speaker: 'Ana',
  occurredAt: null,
  source: { kind: 'turn', threadId: THREAD, observationId: 'obs_old', turnIndex: 0 },
  createdAt: '2024-01-01T00:00:00.000Z',
  provenance: { writer: 'unknown', jobId: null, span: null }, alsoFrom: [], validFrom: null, validTo: null, supersededBy: null, suspicious: false, expiresAt: null,
});

/** A request whose `searchSimilar` answers from `similar` and records what it was asked. */
const request = (batch: WriterTurn[], similar: MemoryRecord[] = [], signal?: AbortSignal): MemoryWriteRequest & { searched: string[] } => {
  const searched: string[] = [];
  return {
    agentId: 'agt_conformance',
    turns: batch,
    searched,
    async searchSimilar(text, limit) {
      searched.push(text);
      return similar.slice(0, limit).map((record) => ({ ...record, vector: new Float32Array(record.vector) }));
    },
    ...(signal ? { signal } : {}),
  };
};

const isAbortError = (error: unknown) => error instanceof Error && error.name === 'AbortError';
const isIsoDateTime = (value: string) => /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(new Date(value).getTime());
const failures = (outcomes: TurnOutcome[]) => outcomes.filter((outcome): outcome is Extract<TurnOutcome, { ok: false }> => !outcome.ok);

/**
 * Registers a vitest suite that checks a {@link MemoryWriter} against the port's contract: one
 * outcome per turn in order; memories are well-formed drafts citing the turn they came from;
 * `supersedes` name only memories `searchSimilar` returned or drafts of the result, each old one once,
 * and their successors are drafts of the result said no earlier than the old draft; concurrent writes keep their own
 * outcomes; failed turns carry a reason and a message, and a writer with `capabilities.reconciles`
 * fails every later turn `earlier_turn_failed`; an abort rejects with an `AbortError`.
 *
 * @example
 * ```ts
 * describeMemoryWriterConformance({
 *   name: 'defaultMemoryWriter',
 *   create: async () => ({ port: defaultMemoryWriter() }),
 * });
 * ```
 */
export function describeMemoryWriterConformance({ name, create }: MemoryWriterConformanceOptions): void {
  const test = (title: string, body: (target: MemoryWriterConformanceTarget) => Promise<void>, enabled: (target: MemoryWriterConformanceTarget) => boolean = () => true) =>
    it(title, async (context) => {
      const target = await create();
      try {
        if (!enabled(target)) return context.skip();
        await body(target);
      } finally {
        await target.cleanup?.();
      }
    });

  describe(name, () => {
    test('identity: has specificationVersion v1, a non-empty id and boolean capabilities', async ({ port }) => {
      expect(port.specificationVersion).toBe('v1');
      expect(typeof port.id).toBe('string');
      expect(port.id.length).toBeGreaterThan(0);
      if (port.capabilities !== undefined) expect(typeof port.capabilities.reconciles).toBe('boolean');
    });

    test('write: one outcome per turn, in the order of the turns', async ({ port }) => {
      const batch = turns(4, FACTS);
      const { outcomes, usage } = await port.write(request(batch));
      expect(outcomes.map((outcome) => outcome.turnIndex)).toEqual([4, 5, 6]);
      // Usage is optional; when reported, one entry per model id with token counts (issue 33).
      if (usage !== undefined) {
        expect(new Set(usage.map((entry) => entry.model)).size).toBe(usage.length);
        for (const entry of usage) expect(typeof entry.model === 'string' && [entry.inputTokens, entry.outputTokens].every((n) => Number.isSafeInteger(n) && n >= 0)).toBe(true);
      }
    });

    test('write: an empty batch resolves no outcomes', async ({ port }) => {
      const { outcomes } = await port.write(request([]));
      expect(outcomes).toEqual([]);
    });

    test('write: memories are drafts citing the turn they came from', async ({ port }) => {
      const batch = turns(0, FACTS);
      const { outcomes } = await port.write(request(batch));
      let memories = 0;
      outcomes.forEach((outcome, position) => {
        expect(outcome.ok).toBe(true);
        if (!outcome.ok) return;
        for (const memory of outcome.memories) {
          memories += 1;
          expect(memory.source).toEqual(batch[position]!.source);
          expect(typeof memory.text).toBe('string');
          expect(memory.text.trim().length).toBeGreaterThan(0);
          expect(typeof memory.keywords).toBe('string');
          expect(memory.speaker === null || typeof memory.speaker === 'string').toBe(true);
          expect(memory.occurredAt === null || isIsoDateTime(memory.occurredAt)).toBe(true);
        }
      });
      // Three turns of plain facts: a writer that remembers none of them is not writing memories.
      expect(memories).toBeGreaterThan(0);
    });

    test('write: supersedes name only memories searchSimilar returned or its own drafts, each once', async ({ port }) => {
      const similar = [existing('mem_porto', 'Ana lives in Porto.'), existing('mem_dog', 'Ana has a dog called Rex.')];
      const { outcomes, supersedes = [] } = await port.write(request(turns(0, FACTS), similar));
      expect(outcomes).toHaveLength(3);
      const offered = similar.map((record) => record.id);
      const draft = (ref: { turnIndex: number; piece: number }) => {
        const outcome = outcomes.find((candidate) => candidate.turnIndex === ref.turnIndex);
        return outcome?.ok ? outcome.memories[ref.piece] : undefined;
      };
      const olds = supersedes.map(({ old }) => ('id' in old ? old.id : `${old.turnIndex}:${old.piece}`));
      for (const { old, by } of supersedes) {
        if ('id' in old) expect(offered).toContain(old.id);
        else {
          expect(draft(old)).toBeDefined();
          if (by) expect(old.turnIndex).toBeLessThanOrEqual(by.turnIndex);
        }
        if (by) expect(draft(by)).toBeDefined();
      }
      expect(new Set(olds).size).toBe(olds.length);
    });

    test('write: concurrent writes for different agents keep their own outcomes', async ({ port }) => {
      const first = turns(0, FACTS.slice(0, 2), 'Ana');
      const second = turns(10, FACTS.slice(1), 'Bruno');
      const [a, b] = await Promise.all([port.write(request(first)), port.write({ ...request(second), agentId: 'agt_other' })]);
      expect(a.outcomes.map((outcome) => outcome.turnIndex)).toEqual([0, 1]);
      expect(b.outcomes.map((outcome) => outcome.turnIndex)).toEqual([10, 11]);
      for (const outcome of b.outcomes) {
        if (outcome.ok) for (const memory of outcome.memories) expect(memory.source.kind === 'turn' && memory.source.turnIndex >= 10).toBe(true);
      }
    });

    test(
      'failure: a failed turn carries a reason and a message',
      async ({ port, failNextWrite }) => {
        failNextWrite!();
        const { outcomes } = await port.write(request(turns(0, FACTS)));
        expect(outcomes.map((outcome) => outcome.turnIndex)).toEqual([0, 1, 2]);
        expect(outcomes[0]!.ok).toBe(false);
        for (const failure of failures(outcomes)) {
          expect(failure.reason).toMatch(/^[a-z][a-z_]*$/);
          expect(failure.message.trim().length).toBeGreaterThan(0);
        }
      },
      (target) => target.failNextWrite !== undefined,
    );

    test(
      'failure: a reconciling writer fails every turn after a failed one with earlier_turn_failed',
      async ({ port, failNextWrite }) => {
        failNextWrite!();
        const { outcomes } = await port.write(request(turns(0, FACTS)));
        const firstFailure = outcomes.findIndex((outcome) => !outcome.ok);
        expect(firstFailure).toBe(0);
        for (const later of outcomes.slice(firstFailure + 1)) expect(later).toMatchObject({ ok: false, reason: 'earlier_turn_failed' });
      },
      (target) => target.failNextWrite !== undefined && target.port.capabilities?.reconciles === true,
    );

    test('abort: write rejects with an AbortError when the signal is already aborted', async ({ port }) => {
      const error = await port.write(request(turns(0, FACTS), [], AbortSignal.abort())).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(isAbortError(error)).toBe(true);
    });

    test(
      'abort: a pending write rejects promptly with an AbortError when aborted',
      async ({ port, stallNextWrite }) => {
        stallNextWrite!();
        const controller = new AbortController();
        const pending = port.write(request(turns(0, FACTS), [], controller.signal)).then(
          () => null,
          (caught: unknown) => caught,
        );
        await new Promise((resolve) => setTimeout(resolve, 20));
        const abortedAt = Date.now();
        controller.abort();
        expect(isAbortError(await pending)).toBe(true);
        expect(Date.now() - abortedAt).toBeLessThan(2_000);
      },
      (target) => target.stallNextWrite !== undefined,
    );
  });
}
