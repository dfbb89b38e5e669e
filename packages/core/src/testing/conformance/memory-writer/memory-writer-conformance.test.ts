import { describeMemoryWriterConformance } from './memory-writer-conformance.js';
import { defaultMemoryWriter } from '../../../memory/default-memory-writer.js';

describeMemoryWriterConformance({
  name: 'defaultMemoryWriter',
  create: async () => ({ port: defaultMemoryWriter() }),
  // It does no I/O and never waits: it ignores the signal and resolves its (deterministic)
  // outcomes at once, which the service may commit as well. Recorded in docs/decisions.md.
  skip: ['abort: write rejects with an AbortError when the signal is already aborted'],
});
