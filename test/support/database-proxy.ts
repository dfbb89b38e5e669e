import { createServer, connect, type Server, type Socket } from 'node:net';

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
