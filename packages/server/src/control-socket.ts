import { chmod, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { isServiceError, type MemoryService } from '@memory-agents/core';
import { isAdminCommand, runAdminCommand, type AdminCommand } from './admin-commands.js';
import { UsageError, type CliValues } from './cli-options.js';

/**
 * PGlite admits one process per data dir, so while a server runs, admin commands reach it over a
 * Unix socket in the data dir (mode 0600: only the owner can open it). Protocol: one JSON line
 * `{ command, args }` in (`args`: the command's CLI flags, parsed by its entry in `ADMIN_COMMANDS`),
 * one JSON line `{ ok: true, result }` or `{ ok: false, error, code }` out.
 */
export async function listenControlSocket(path: string, service: MemoryService): Promise<Server> {
  await rm(path, { force: true });
  const server = createServer((socket) => {
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > 64 * 1024) socket.destroy();
      const newline = buffer.indexOf('\n');
      if (newline === -1) return;
      const line = buffer.slice(0, newline);
      void answer(line).then((reply) => socket.end(`${JSON.stringify(reply)}\n`));
    });
    socket.on('error', () => undefined);
  });
  async function answer(line: string): Promise<unknown> {
    try {
      const request = JSON.parse(line) as { command: unknown; args?: unknown };
      if (!isAdminCommand(request.command)) return { ok: false, code: 'invalid_request', error: `unknown command ${String(request.command)}` };
      return { ok: true, result: await runAdminCommand(service, request.command, flagValues(request.args)) };
    } catch (error) {
      if (error instanceof UsageError) return { ok: false, code: 'invalid_request', error: error.message };
      return isServiceError(error)
        ? { ok: false, code: error.code, error: error.message }
        : { ok: false, code: 'internal_error', error: error instanceof Error ? error.message : String(error) };
    }
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // umask-independent: tighten right after bind, before anyone learns the server is up.
    server.listen(path, () => resolve());
  });
  await chmod(path, 0o600);
  return server;
}

/** The flags of a command as sent: only string and boolean values are kept. */
function flagValues(args: unknown): CliValues {
  if (typeof args !== 'object' || args === null) return {};
  return Object.fromEntries(Object.entries(args).filter(([, value]) => typeof value === 'string' || typeof value === 'boolean')) as CliValues;
}

export type ControlReply = { ok: true; result: unknown } | { ok: false; code: string; error: string };

/** Sends one command to a running server; rejects with the socket error when none listens. */
export function sendControlCommand(path: string, command: AdminCommand, args: CliValues): Promise<ControlReply> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let buffer = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify({ command, args })}\n`));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
    });
    socket.on('end', () => {
      try {
        resolve(JSON.parse(buffer) as ControlReply);
      } catch (error) {
        reject(error);
      }
    });
    socket.on('error', reject);
  });
}
