import { createServer, connect, type Server, type Socket } from 'node:net';
import { runCli } from './server.js';

type Mode = 'pass' | 'refuse' | 'blackhole';

/**
 * A TCP proxy between the servers and PostgreSQL. `refuse` resets every open connection and every
 * new one; `blackhole` accepts connections and stops moving bytes either way (packets dropped, as a
 * partition does: the kernel keeps them and delivers them when the link is back).
 */
export async function databaseProxy(target: { host: string; port: number }) {
  let mode: Mode = 'pass';
  const pairs = new Set<{ inbound: Socket; outbound: Socket }>();
  const server: Server = createServer((inbound) => {
    if (mode === 'refuse') {
      inbound.resetAndDestroy();
      return;
    }
    const outbound = connect(target.port, target.host);
    const pair = { inbound, outbound };
    pairs.add(pair);
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    if (mode === 'blackhole') {
      inbound.pause();
      outbound.pause();
    }
    const end = () => {
      pairs.delete(pair);
      inbound.destroy();
      outbound.destroy();
    };
    for (const socket of [inbound, outbound]) {
      socket.on('error', end);
      socket.on('close', end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut(next: 'refuse' | 'blackhole') {
      mode = next;
      for (const { inbound, outbound } of pairs) {
        if (next === 'refuse') {
          inbound.resetAndDestroy();
          outbound.destroy();
        } else {
          inbound.pause();
          outbound.pause();
        }
      }
    },
    restore() {
      mode = 'pass';
      for (const { inbound, outbound } of pairs) {
        inbound.resume();
        outbound.resume();
      }
    },
    async close() {
      for (const { inbound, outbound } of pairs) {
        inbound.destroy();
        outbound.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type DatabaseProxy = Awaited<ReturnType<typeof databaseProxy>>;

/** How many of `texts` (memory records read past the proxy) hold each `tokNNNNNx` marker the cut tests send. */
export function countTokens(texts: readonly string[]): Map<string, number> {
  const seen = new Map<string, number>();
  for (const text of texts) for (const token of text.match(/tok\d{5}x/g) ?? []) seen.set(token, (seen.get(token) ?? 0) + 1);
  return seen;
}

/**
 * Readies the organization a cut test sends from, through the admin CLI on the database itself (past
 * the proxy): billing on with 1,000 credits (so the ledger can be checked) and request windows wide
 * enough that no 429 stands in for an outage answer.
 */
export async function billedOrganizationWithoutWindows(organizationId: string, directUrl: string): Promise<void> {
  const cli = async (...words: string[]) => {
    const result = await runCli([...words, '--database-url', directUrl, '--json']);
    if (result.code !== 0) throw new Error(`memory-agents ${words.join(' ')}: exit ${result.code}: ${result.stderr}`);
  };
  await cli('billing', 'enable', '--org', organizationId);
  await cli('credits', 'add', '--org', organizationId, '--amount', '1000');
  const generous = Object.fromEntries(
    ['thread_create', 'observe', 'observe_respond', 'chat', 'observe_file'].map((operation) => [
      operation,
      { subject: { limit: 100_000, windowSeconds: 10 }, organization: { limit: 100_000, windowSeconds: 10 } },
    ]),
  );
  await cli('orgs', 'limits', '--org', organizationId, '--limits', JSON.stringify({ rateLimits: generous }));
}
