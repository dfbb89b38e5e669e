import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server as NetServer } from 'node:net';
import { rm, writeFile } from 'node:fs/promises';
import { stderrLogger, type Logger, type MemoryService } from '@memory-agents/core';
import { createHandler } from '@memory-agents/http';
import { composeService, dataPaths, type StateLocation } from './compose.js';
import { listenControlSocket } from './control-socket.js';
import { createNodeServer, type ServerLimits } from './create-node-server.js';
import type { ServiceModels } from './model-options.js';

export type StartServerOptions = StateLocation & {
  /** @default 8787 */
  port?: number;
  /** @default "127.0.0.1" */
  host?: string;
  logger?: Logger;
  /** Model ports replacing the offline defaults (see `createServiceModels`). @default the offline defaults */
  models?: ServiceModels;
  /**
   * Timeouts and the connection cap of the HTTP server (see `ServerLimits` for each default):
   * headers 10 s, whole request 120 s, keep-alive 5 s, 1024 connections, bodies slower than
   * 1 KiB/s cut off after 10 s.
   */
  limits?: ServerLimits;
  /** Largest JSON request body in bytes (`createHandler`'s `maxJsonBytes`). @default 33554432 */
  maxJsonBytes?: number;
};

export type RunningServer = {
  url: string;
  service: MemoryService;
  /** The key minted on an empty data dir (shown once), else null. */
  firstKey: { organizationId: string; key: string; keyId: string } | null;
  /** Stops accepting, drains background work and closes the store. Idempotent. */
  close(): Promise<void>;
};

/**
 * Starts the HTTP server on the embedded default or on PostgreSQL. On a state with no
 * organization, creates one and its first key (returned once in `firstKey`).
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const logger = options.logger ?? stderrLogger;
  const composed = await composeService(options, logger, options.models);
  const service = composed.service;
  await service.start();

  let firstKey: RunningServer['firstKey'] = null;
  if ((await service.admin.listOrganizations()).length === 0) {
    const org = await service.admin.createOrganization({ name: 'Default organization' });
    const key = await service.admin.createKey({ organizationId: org.organizationId });
    firstKey = { organizationId: org.organizationId, key: key.key, keyId: key.keyId };
  }

  let control: NetServer | null = null;
  const paths = options.databaseUrl === undefined ? dataPaths(options.dataDir) : null;
  if (paths) {
    control = await listenControlSocket(paths.controlSocket, service);
    await writeFile(paths.pidFile, String(process.pid), { mode: 0o600 });
  }

  const handler = createHandler(service, { logger, ...(options.maxJsonBytes === undefined ? {} : { maxJsonBytes: options.maxJsonBytes }) });
  const server: Server = createNodeServer(handler, options.limits, logger);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8787, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${address.port}`,
    service,
    firstKey,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        if (control) await new Promise<void>((resolve) => control!.close(() => resolve()));
        await composed.close();
        if (paths) {
          await rm(paths.controlSocket, { force: true });
          await rm(paths.pidFile, { force: true });
        }
      })();
      return closing;
    },
  };
}
