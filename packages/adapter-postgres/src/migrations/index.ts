import { storeMigration0001 } from './0001-store.js';

/**
 * The store's versioned migrations, applied in order by `migrate()`. Never edit a released one;
 * add the next number.
 */
export const STORE_MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  { version: 1, name: 'store', sql: storeMigration0001 },
];
