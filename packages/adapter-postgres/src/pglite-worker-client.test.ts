import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_FLUSH, isFatalStorageError } from './pglite-worker-client.js';
import { openSqlClient, type SqlClient } from './sql-client.js';

/**
 * A PGlite data dir opened by `openSqlClient({ dataDir })` runs in a worker thread
 * (pglite-worker-client.ts): the same SqlClient behaviour as in process. The storage failing under
 * it is covered end to end by test/reliability/read-only-storage.test.ts (a loop device, root).
 */
describe('PGlite in a worker thread', () => {
  let root: string;
  let client: SqlClient;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ma-pglite-worker-'));
    client = await openSqlClient({ dataDir: join(root, 'pgdata') });
    await client.exec('CREATE TABLE items (id int PRIMARY KEY, body jsonb, data bytea, at timestamptz)');
  }, 120_000);
  afterAll(async () => {
    await client.close();
    await rm(root, { recursive: true, force: true });
  });

  it('answers queries with parsed values, and errors with PostgreSQL fields', async () => {
    const at = new Date('2026-01-02T03:04:05.000Z');
    await client.query('INSERT INTO items VALUES ($1, $2, $3, $4)', [1, JSON.stringify({ a: [1, 2] }), new Uint8Array([7, 8]), at]);
    const { rows } = await client.query<{ id: number; body: unknown; data: Uint8Array; at: Date }>('SELECT * FROM items WHERE id = 1');
    expect(rows[0]!.body).toEqual({ a: [1, 2] });
    expect([...rows[0]!.data]).toEqual([7, 8]);
    expect(rows[0]!.at.toISOString()).toBe(at.toISOString());
    const duplicate = await client.query('INSERT INTO items (id) VALUES (1)').catch((error: unknown) => error);
    expect(duplicate).toMatchObject({ code: '23505', constraint: 'items_pkey' });
  });

  it('commits a transaction, rolls one back when its callback throws, and serializes others behind it', async () => {
    let outside: Promise<{ rows: { n: number }[] }> | null = null;
    await client.transaction(async (tx) => {
      await tx.query('INSERT INTO items (id) VALUES (2)');
      // A query outside the transaction waits for it (one connection, as in process).
      outside = client.query<{ n: number }>('SELECT count(*)::int AS n FROM items');
      await tx.query('INSERT INTO items (id) VALUES (3)');
    });
    expect((await outside!).rows[0]!.n).toBe(3);
    const failed = await client
      .transaction(async (tx) => {
        await tx.query('INSERT INTO items (id) VALUES (4)');
        throw new Error('changed my mind');
      })
      .catch((error: unknown) => (error as Error).message);
    expect(failed).toBe('changed my mind');
    const { rows } = await client.query<{ id: number }>('SELECT id FROM items ORDER BY id');
    expect(rows.map((row) => row.id)).toEqual([1, 2, 3]);
  });

  it('runs transactions started together one after another, each statement in its own transaction', async () => {
    // The begin is not waited for: statements sent right behind it wait in the worker for their transaction.
    const ids = [10, 11, 12, 13];
    const seen = await Promise.all(
      ids.map((id) =>
        client.transaction(async (tx) => {
          await tx.query('INSERT INTO items (id) VALUES ($1)', [id]);
          const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM items WHERE id >= 10');
          return rows[0]!.n;
        }),
      ),
    );
    expect(seen).toEqual([1, 2, 3, 4]);
    // A statement failing first in a transaction rolls it back with its own error.
    const failed = await client.transaction((tx) => tx.query('INSERT INTO items (id) VALUES (10)')).catch((error: unknown) => error);
    expect(failed).toMatchObject({ code: '23505' });
    await client.query('DELETE FROM items WHERE id >= 10');
  });

  it('keeps what statements answered without a flush wrote, with the writes after them, across a reopen', async () => {
    const dataDir = join(root, 'no-flush');
    const first = await openSqlClient({ dataDir });
    await first.exec('CREATE TABLE marks (id int PRIMARY KEY)');
    await first.query(`${NO_FLUSH}INSERT INTO marks VALUES (1)`);
    expect((await first.query<{ n: number }>('SELECT count(*)::int AS n FROM marks')).rows[0]!.n).toBe(1);
    await first.query('INSERT INTO marks VALUES (2)');
    await first.query(`${NO_FLUSH}UPDATE marks SET id = 3 WHERE id = 1`);
    await first.close();
    const again = await openSqlClient({ dataDir });
    expect((await again.query<{ id: number }>('SELECT id FROM marks ORDER BY id')).rows.map((row) => row.id)).toEqual([2, 3]);
    await again.close();
  });

  it('tells a storage failure PGlite does not recover from apart from a full disk it recovers from', () => {
    expect(isFatalStorageError({ code: '42501', message: 'could not write to log file "000000010000000000000001" at offset 8192, length 8192: Read-only file system' })).toBe(true);
    expect(isFatalStorageError(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }))).toBe(true);
    expect(isFatalStorageError({ message: 'could not fsync file "base/5/1259": Input/output error' })).toBe(true);
    expect(isFatalStorageError({ code: '53100', message: 'could not extend file "base/5/16384": No space left on device' })).toBe(false);
    expect(isFatalStorageError({ code: '23505', message: 'duplicate key value violates unique constraint' })).toBe(false);
  });
});
