import { describeStoreConformance } from '../../testing/conformance/store/index.js';
import { inMemoryStore } from './index.js';

describeStoreConformance({
  name: 'in-memory',
  create: async () => {
    const store = inMemoryStore();
    await store.init();
    return { store };
  },
});
