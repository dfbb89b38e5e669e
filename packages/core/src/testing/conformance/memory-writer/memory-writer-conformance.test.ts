import { describeMemoryWriterConformance } from './memory-writer-conformance.js';
import { defaultMemoryWriter } from '../../../memory/default-memory-writer.js';

describeMemoryWriterConformance({
  name: 'defaultMemoryWriter',
  create: async () => ({ port: defaultMemoryWriter() }),
});
