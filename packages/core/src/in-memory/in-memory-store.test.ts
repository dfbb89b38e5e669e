import { describeStoreConformance } from '../testing/conformance/store/index.js';
import { inMemoryStore } from './in-memory-store.js';

describeStoreConformance({
  name: 'in-memory',
  create: async () => {
    const store = inMemoryStore();
    await store.init();
    return { store };
  },
});
