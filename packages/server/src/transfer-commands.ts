import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { silentLogger, splitLines, type ImportAgentResult, type ImportProgress } from '@memory-agents/core';
import type { StateLocation } from './paths.js';
import type { ServiceModels } from './model-options.js';

/**
 * `memory-agents export` and `import`: they open the state themselves (no control socket: an
 * export is a stream, not one JSON reply), so on a data dir the server must be stopped first (the
 * embedded database has one process); with `--database-url` they run beside servers.
 */

/** Writes the agent's export lines through `write` (which waits when the output is full). */
export async function exportToStream(
  location: StateLocation,
  input: { agentId: string; organizationId?: string; vectors: boolean },
  write: (text: string) => Promise<void>,
): Promise<number> {
  const { composeService } = await import('./compose.js');
  const composed = await composeService(location, silentLogger, {}, { backgroundWork: false });
  await composed.service.start();
  let lines = 0;
  try {
    // Lines are batched into writes of ~1 MiB: one write per line is slow on a pipe.
    let buffer = '';
    for await (const line of composed.service.admin.exportAgent(input)) {
      buffer += line;
      lines++;
      if (buffer.length >= 1 << 20) {
        await write(buffer);
        buffer = '';
      }
    }
    if (buffer !== '') await write(buffer);
    return lines;
  } finally {
    await composed.close();
  }
}

/**
 * Imports an export file (a path, or a stream such as stdin, which is copied to a temporary file
 * first: the import reads the file twice, once to check it, once to write it).
 */
export async function importFromFile(
  location: StateLocation,
  input: { organizationId: string; file: string | NodeJS.ReadableStream; onProgress?: (progress: ImportProgress) => void },
  models: ServiceModels,
): Promise<ImportAgentResult> {
  let path = typeof input.file === 'string' ? input.file : null;
  let temporary: string | null = null;
  try {
    if (path === null) {
      temporary = await mkdtemp(join(tmpdir(), 'memory-agents-import-'));
      path = join(temporary, 'agent.jsonl');
      await pipeline(input.file as NodeJS.ReadableStream, createWriteStream(path, { mode: 0o600 }));
    }
    const file = path;
    const { composeService } = await import('./compose.js');
    const composed = await composeService(location, silentLogger, models, { backgroundWork: false });
    await composed.service.start();
    try {
      return await composed.service.admin.importAgent({
        organizationId: input.organizationId,
        open: () => splitLines(createReadStream(file)),
        ...(input.onProgress ? { onProgress: input.onProgress } : {}),
      });
    } finally {
      await composed.close();
    }
  } finally {
    if (temporary !== null) await rm(temporary, { recursive: true, force: true });
  }
}
