import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isUnavailableError } from '@memory-agents/core/adapter';
import { openSqlClient } from './sql-client.js';
import { postgresUrl } from '@memory-agents/core/testing';

const databaseUrl = postgresUrl('node-postgres connections lost inside a transaction');

describe.runIf(databaseUrl)('the node-postgres SqlClient when the database goes away', () => {
  it('survives a connection terminated while a transaction holds it idle: rejects (no crash), destroys it, and serves again', async () => {
    const client = await openSqlClient({ connectionString: databaseUrl!, timeouts: { connectMs: 2000, queryMs: 2000 } });
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      let pid = 0;
      const error = await client
        .transaction(async (tx) => {
          pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
          await admin.query('SELECT pg_terminate_backend($1)', [pid]);
          // The checked-out client emits 'error' while no query runs: unhandled, it ended the process.
          await new Promise((resolve) => setTimeout(resolve, 300));
          await tx.query('SELECT 1');
        })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Error);
      expect(isUnavailableError(error)).toBe(true);
      // The pool hands out a live connection, not the dead one.
      const again = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      expect(again.rows[0]!.pid).not.toBe(pid);
      expect(await client.transaction(async (tx) => (await tx.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one)).toBe(1);
    } finally {
      await admin.end();
      await client.close();
    }
  });

  it('bounds a statement by queryMs (statement_timeout and the client-side query_timeout), as a 503-class failure', async () => {
    const client = await openSqlClient({ connectionString: databaseUrl!, timeouts: { queryMs: 500 } });
    try {
      const started = Date.now();
      const error = await client.query('SELECT pg_sleep(5)').catch((caught: unknown) => caught);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(isUnavailableError(error)).toBe(true);
      const inTransaction = await client.transaction((tx) => tx.query('SELECT pg_sleep(5)')).catch((caught: unknown) => caught);
      expect(isUnavailableError(inTransaction)).toBe(true);
      // Unbounded transactions (migrations, the HNSW build) are not cut.
      await expect(client.transaction((tx) => tx.query('SELECT pg_sleep(0.8)'), { unbounded: true })).resolves.toBeTruthy();
      expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('refuses a connection that cannot be made within connectMs as a 503-class failure', async () => {
    // A port nothing listens on: refused at once.
    const url = new URL(databaseUrl!);
    url.port = '1';
    const error = await openSqlClient({ connectionString: url.toString(), timeouts: { connectMs: 1000 } }).catch((caught: unknown) => caught);
    expect(isUnavailableError(error)).toBe(true);
  });

  it('refuses timeouts that are not whole milliseconds >= 0', async () => {
    await expect(openSqlClient({ connectionString: databaseUrl!, timeouts: { queryMs: -1 } })).rejects.toThrow(/timeouts.queryMs must be a whole number/);
  });
});
