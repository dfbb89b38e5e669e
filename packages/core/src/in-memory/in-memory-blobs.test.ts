import { describeBlobStoreConformance } from '../testing/conformance/blob-store/index.js';
import { inMemoryBlobs } from './in-memory-blobs.js';

// No `reopen`: a second in-memory instance never shares the first one's data.
describeBlobStoreConformance({
  name: 'inMemoryBlobs',
  create: async () => ({ port: inMemoryBlobs() }),
});
