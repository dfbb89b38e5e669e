import { storeMigration0001 } from './0001-store.js';
import { storeMigration0002 } from './0002-jobs.js';
import { storeMigration0003 } from './0003-credits.js';
import { storeMigration0004 } from './0004-documents.js';
import { storeMigration0005 } from './0005-rate-limit-function.js';
import { storeMigration0006 } from './0006-concurrency-function.js';
import { storeMigration0007 } from './0007-erasures.js';
import { storeMigration0008 } from './0008-webhooks.js';
import { storeMigration0009 } from './0009-job-supersessions.js';
import { storeMigration0010 } from './0010-job-merges.js';
import { storeMigration0011 } from './0011-job-model-usage.js';
import { storeMigration0012 } from './0012-job-repoints.js';
import { storeMigration0013 } from './0013-memory-marks.js';
import { storeMigration0014 } from './0014-memory-policy-marks.js';
import { storeMigration0015 } from './0015-maintenance-runs.js';
import { storeMigration0016 } from './0016-memory-review.js';

/**
 * The store's versioned migrations, applied in order by `migrate()`. Never edit a released one;
 * add the next number. A gap is allowed (each version is applied once, in list order).
 */
export const STORE_MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  { version: 1, name: 'store', sql: storeMigration0001 },
  { version: 2, name: 'jobs', sql: storeMigration0002 },
  { version: 3, name: 'credits', sql: storeMigration0003 },
  { version: 4, name: 'documents', sql: storeMigration0004 },
  { version: 5, name: 'rate-limit-function', sql: storeMigration0005 },
  { version: 6, name: 'concurrency-function', sql: storeMigration0006 },
  { version: 7, name: 'erasures', sql: storeMigration0007 },
  { version: 8, name: 'webhooks', sql: storeMigration0008 },
  { version: 9, name: 'job-supersessions', sql: storeMigration0009 },
  { version: 10, name: 'job-merges', sql: storeMigration0010 },
  { version: 11, name: 'job-model-usage', sql: storeMigration0011 },
  { version: 12, name: 'job-repoints', sql: storeMigration0012 },
  { version: 13, name: 'memory-marks', sql: storeMigration0013 },
  { version: 14, name: 'memory-policy-marks', sql: storeMigration0014 },
  { version: 15, name: 'maintenance-runs', sql: storeMigration0015 },
  { version: 16, name: 'memory-review', sql: storeMigration0016 },
];
