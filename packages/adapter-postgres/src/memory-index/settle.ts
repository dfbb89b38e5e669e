import type { SqlClient } from '../sql-client.js';
import type { IndexTables } from './schema.js';

/** What one settle did (`onSettle`). */
export type SettleReport = {
  /** Rows written or deleted since the previous settle. */
  rows: number;
  /** `'vacuum analyze'` on PostgreSQL, `'analyze'` on PGlite (see `settle`). */
  statement: 'vacuum analyze' | 'analyze';
  /** Wall time of the statement, milliseconds. */
  ms: number;
};

export type SettlerOptions = {
  client: SqlClient;
  tables: IndexTables;
  /** Rows written or deleted since the last settle from which a quiet period settles; `null`: never by itself. */
  afterRows: number | null;
  /** Quiet period (no write) after which a settle that is due runs. */
  afterIdleMs: number;
  /** Runs `task` after the background work queued before it (the HNSW build), never beside it. */
  enqueue: (task: () => Promise<void>) => Promise<void>;
  onBackgroundError: (error: unknown, operation: string) => void;
  onSettle?: (report: SettleReport) => void;
};

export type Settler = {
  /** A write starts: the quiet period waits for it. */
  writing(): void;
  /** A write ended (`rows` written or deleted, 0 when it failed); (re)starts the quiet-period timer once enough piled up. */
  written(rows: number): void;
  /** Settles now (after the queued background work), whatever the count. */
  settle(): Promise<void>;
  /** Stops the timer. */
  close(): void;
};

/**
 * After a bulk write the tables' planner statistics are those of the empty or small tables
 * (PostgreSQL's autovacuum catches up only when it runs, and may be off): postings read by
 * sequential scans, no index-only scans (visibility map unset). The settler brings the index to
 * the settled state in the background, once `afterRows` rows were written and no write came for
 * `afterIdleMs`, as the LanceDB adapter settles its table:
 *
 * - PostgreSQL: `VACUUM (ANALYZE)` of records, terms and postings, outside any transaction and
 *   without the statement timeout (`SqlClient.maintenance`). It takes a SHARE UPDATE EXCLUSIVE
 *   lock: searches and writes go on meanwhile, on the pool's other connections.
 * - PGlite: `ANALYZE` only. PGlite has one connection, so whatever runs holds every search; a
 *   sampled ANALYZE is bounded (30,000 rows per table) while VACUUM reads the whole tables.
 *
 * Queued behind the HNSW build (`enqueue`), so the statistics include the new index.
 */
export function createSettler(options: SettlerOptions): Settler {
  const { client, tables, afterRows, afterIdleMs } = options;
  let rowsSince = 0;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  let pendingWrites = 0;

  async function run(): Promise<void> {
    const rows = rowsSince;
    rowsSince = 0;
    const list = `${tables.records}, ${tables.terms}, ${tables.postings}`;
    const started = performance.now();
    let statement: SettleReport['statement'];
    if (client.dialect === 'postgres' && client.maintenance) {
      statement = 'vacuum analyze';
      await client.maintenance(`VACUUM (ANALYZE) ${list}`);
    } else {
      statement = 'analyze';
      await client.exec(`ANALYZE ${list}`);
    }
    options.onSettle?.({ rows, statement, ms: performance.now() - started });
  }

  function queue(): Promise<void> {
    return options.enqueue(async () => {
      if (closed) return;
      try {
        await run();
      } catch (error) {
        options.onBackgroundError(error, 'settle');
      }
    });
  }

  return {
    writing() {
      pendingWrites++;
      if (timer) clearTimeout(timer);
      timer = null;
    },
    written(rows) {
      pendingWrites = Math.max(0, pendingWrites - 1);
      if (closed) return;
      rowsSince += Math.max(0, rows);
      if (afterRows === null || rowsSince < afterRows || pendingWrites > 0) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        void queue();
      }, afterIdleMs);
      timer.unref();
    },
    async settle() {
      if (timer) clearTimeout(timer);
      timer = null;
      await queue();
    },
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
