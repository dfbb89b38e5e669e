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
  /**
   * What started it: `written` (the quiet period after `afterRows` writes), `requested`
   * (`settle()`), `closing` (a settle was due when the index closed: an import that ends and exits),
   * `opened` (the tables held many changes no settle had seen when this process opened them).
   */
  trigger: 'written' | 'requested' | 'closing' | 'opened';
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
  /**
   * Opening tables this process did not write: queues a settle when one of them has many changes
   * since its last ANALYZE or VACUUM (`stale`). Returns at once; the check and the settle run in
   * the background, after the queued work.
   */
  opened(): void;
  /** Stops the timer; a settle that was due (enough rows, quiet period not over) runs first. */
  close(): Promise<void>;
};

/** One table's counters, from pg_stat_user_tables and pg_class. */
export type TableActivity = { modifiedSinceAnalyze: number; insertedSinceVacuum: number; dead: number; rows: number };

/**
 * Whether a table needs a settle: at least `afterRows` rows changed since its last ANALYZE, or
 * inserted or deleted since its last VACUUM (index-only scans need the visibility map a VACUUM
 * sets), and at least a tenth of its rows (the analyse half of autovacuum's default rule, which
 * may be off: issue 41). `vacuums`: whether the settle vacuums (PostgreSQL) or only analyses (PGlite).
 */
export function stale(table: TableActivity, afterRows: number, vacuums: boolean): boolean {
  const floor = Math.max(afterRows, Math.ceil(0.1 * table.rows), 1);
  return table.modifiedSinceAnalyze >= floor || (vacuums && table.insertedSinceVacuum + table.dead >= floor);
}

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
 *
 * Two more cases where the tables would otherwise stay unsettled (issue 41; autovacuum may be off):
 * `close()` runs a settle that is due (an import closes the index right after its last write), and
 * `opened()` settles tables that another process left with many changes no settle saw (a process
 * killed before its quiet period ended, or a load made with `settleAfterRows: null`).
 */
export function createSettler(options: SettlerOptions): Settler {
  const { client, tables, afterRows, afterIdleMs } = options;
  let rowsSince = 0;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  /** close() began: a settle queued by `opened` is skipped (a short-lived process does not pay for it). */
  let closing = false;
  let openCheck: Promise<void> = Promise.resolve();
  let pendingWrites = 0;

  const vacuums = client.dialect === 'postgres' && client.maintenance !== undefined;

  /** The three tables' counters (the statistics of other connections arrive within about a second). */
  async function activity(): Promise<TableActivity[]> {
    const { rows } = await client.query<{ n_mod_since_analyze: string | number | null; n_ins_since_vacuum: string | number | null; n_dead_tup: string | number | null; n_live_tup: string | number | null; reltuples: number | null }>(
      `SELECT s.n_mod_since_analyze, s.n_ins_since_vacuum, s.n_dead_tup, s.n_live_tup, c.reltuples
       FROM unnest($1::text[]) AS t(name) JOIN pg_stat_user_tables s ON s.relid = to_regclass(t.name) JOIN pg_class c ON c.oid = s.relid`,
      [[tables.records, tables.terms, tables.postings]],
    );
    return rows.map((row) => ({
      modifiedSinceAnalyze: Number(row.n_mod_since_analyze ?? 0),
      insertedSinceVacuum: Number(row.n_ins_since_vacuum ?? 0),
      dead: Number(row.n_dead_tup ?? 0),
      rows: Math.max(0, Number(row.reltuples ?? 0), Number(row.n_live_tup ?? 0)),
    }));
  }

  async function run(trigger: SettleReport['trigger']): Promise<void> {
    const rows = rowsSince;
    rowsSince = 0;
    const list = `${tables.records}, ${tables.terms}, ${tables.postings}`;
    const started = performance.now();
    let statement: SettleReport['statement'];
    if (vacuums) {
      statement = 'vacuum analyze';
      await client.maintenance!(`VACUUM (ANALYZE) ${list}`);
    } else {
      statement = 'analyze';
      await client.exec(`ANALYZE ${list}`);
    }
    options.onSettle?.({ rows, statement, ms: performance.now() - started, trigger });
  }

  /** Queued behind the background work; `when` is checked when its turn comes. */
  function queue(trigger: SettleReport['trigger'], when: () => Promise<boolean> | boolean = () => true): Promise<void> {
    return options.enqueue(async () => {
      try {
        if (await when()) await run(trigger);
      } catch (error) {
        options.onBackgroundError(error, 'settle');
      }
    });
  }

  const due = () => afterRows !== null && rowsSince >= afterRows;

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
        void queue('written');
      }, afterIdleMs);
      timer.unref();
    },
    async settle() {
      if (timer) clearTimeout(timer);
      timer = null;
      await queue('requested');
    },
    opened() {
      if (afterRows === null || closed) return;
      const threshold = afterRows;
      // Checked first, queued only when stale: queueing also runs the HNSW check (`enqueue`).
      openCheck = activity()
        .then((tables) => (!closing && tables.some((table) => stale(table, threshold, vacuums)) ? queue('opened', () => !closing) : undefined))
        .catch((error: unknown) => options.onBackgroundError(error, 'settle'));
    },
    async close() {
      closing = true;
      if (timer) clearTimeout(timer);
      timer = null;
      // An import (or any bulk write) that closes the index right after its last write: before,
      // the due settle was dropped with the timer and the tables stayed unanalysed (issue 41).
      await openCheck;
      if (!closed && due()) await queue('closing', due);
      closed = true;
    },
  };
}
