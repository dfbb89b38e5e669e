import type { ChildProcess } from 'node:child_process';
import type { Connection, Table } from '@lancedb/lancedb';
import type { Schema } from 'apache-arrow';
import { ServiceError } from '@memory-agents/core';
import { EmbedderMismatchError, type EmbedderFingerprint } from '@memory-agents/core/adapter';
import type { ResolvedOptions } from './options.js';
import { ListCache } from './list-cache.js';
import { MaintenanceLane } from './maintenance-lane.js';
import { WriteQueue } from './write-queue.js';

/**
 * What one index instance knows about its table, shared by its modules (open, writes,
 * maintenance, search, deletes). Writes run in the write queue, index builds and compaction in the
 * maintenance lane beside it; searches read the flags they set.
 */
export type IndexState = {
  readonly options: ResolvedOptions;
  readonly queue: WriteQueue;
  readonly lane: MaintenanceLane;
  starting: Promise<void> | null;
  connection: Connection | null;
  table: Table | null;
  /** The current generation's table name: `options.tableName`, or the table a re-embed switched to (reembed.ts). */
  tableName: string;
  /** The side table of a re-embed in progress (its target vectors), and its target. */
  side: Table | null;
  target: EmbedderFingerprint | null;
  /** The table's schema built with this package's Arrow classes (null until the table exists). */
  schema: Schema | null;
  fingerprint: EmbedderFingerprint | null;
  /** Whether the table has the `hit` column (schema version 2); searches read hits from it. */
  hasHitColumn: boolean;
  hasFullTextIndex: boolean;
  /** Whether the btree on `valid_to` exists (tables made before the memory record v2 get it on their next write). */
  hasValidityIndex: boolean;
  hasVectorIndex: boolean;
  rowsAtVectorIndexBuild: number;
  writesSinceOptimize: number;
  rowsSinceReindex: number;
  isClosed: boolean;
  idleTimer: NodeJS.Timeout | null;
  /** The child process building the vector index, if one runs (killed on close). */
  buildProcess: ChildProcess | null;
  /** Per agent: its share of the table's rows, when it was counted and at which write generation. */
  readonly agentShares: Map<string, { share: number; at: number; generation: number }>;
  /** Per agent: the records' list order and filter columns, followed by this instance's writes (`list-cache.ts`). */
  readonly listCache: ListCache;
};

export function createState(options: ResolvedOptions): IndexState {
  return {
    options,
    queue: new WriteQueue(),
    lane: new MaintenanceLane(),
    starting: null,
    connection: null,
    table: null,
    tableName: options.tableName,
    side: null,
    target: null,
    schema: null,
    fingerprint: null,
    hasHitColumn: false,
    hasFullTextIndex: false,
    hasValidityIndex: false,
    hasVectorIndex: false,
    rowsAtVectorIndexBuild: 0,
    writesSinceOptimize: 0,
    rowsSinceReindex: 0,
    isClosed: false,
    idleTimer: null,
    buildProcess: null,
    agentShares: new Map(),
    listCache: new ListCache(options.listCacheRecords),
  };
}

/** Driver failures become `service_unavailable`; port-level errors pass through. */
export async function guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof EmbedderMismatchError || error instanceof RangeError || error instanceof ServiceError) throw error;
    throw new ServiceError('service_unavailable', `The memory index (lancedb) failed during ${operation}.`, { cause: error });
  }
}

/** The filter keeping one agent's rows. */
// The where-clause helpers live beside `sqlString` (rows.ts), where the list cache takes them from too.
export { agentFilter, inList } from './rows.js';
