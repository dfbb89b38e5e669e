export {
  describeMemoryWriterConformance,
  type MemoryWriterConformanceOptions,
  type MemoryWriterConformanceTarget,
} from './memory-writer-conformance.js';
