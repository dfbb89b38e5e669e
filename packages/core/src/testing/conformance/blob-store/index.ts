export {
  describeBlobStoreConformance,
  type BlobStoreConformanceOptions,
  type BlobStoreConformanceTarget,
} from './blob-store-conformance.js';
