import { silentLogger } from '@memory-agents/core';
import { baselineWasmOnly, CliError, print, runningServerPid, type CliIo } from './cli-support.js';
import type { ModelSettings } from './model-options.js';
import { dataPaths, type StateLocation } from './paths.js';

/** `memory-agents reembed run`: the re-embed to its end in this process, with a progress line per step. */
export async function reembedRun(location: StateLocation, models: ModelSettings, json: boolean, io: CliIo): Promise<number> {
  if (location.databaseUrl === undefined) {
    const owner = await runningServerPid(location.dataDir);
    if (owner !== null) throw new CliError('data_dir_locked', `a server (pid ${owner}) runs on ${dataPaths(location.dataDir).root} and re-embeds by itself; see "memory-agents reembed status"`);
    baselineWasmOnly();
  }
  const { composeService } = await import('./compose.js');
  const { createServiceModels } = await import('./model-options.js');
  const serviceModels = await createServiceModels(models, io.env);
  const composed = await composeService(location, silentLogger, serviceModels, { backgroundWork: false });
  try {
    await composed.service.start();
    let printed = -1;
    const final = await composed.service.reembedding.run({
      onProgress: (status) => {
        // One line per tenth (and the first and last), not one per batch.
        const step = Math.floor((status.done / Math.max(1, status.total)) * 10);
        if (json || step === printed) return;
        printed = step;
        io.stdout(`re-embedding: ${status.done} of ${status.total} memories (${status.from.id} -> ${status.to.id})\n`);
      },
    });
    const embedder = await composed.index.embedder();
    const result = final
      ? { reembedded: final.total, embedder: embedder?.id ?? null, message: `re-embedded ${final.total} memories; the index now uses ${embedder?.id}` }
      : { reembedded: 0, embedder: embedder?.id ?? null, message: embedder ? `nothing to re-embed: the index already uses ${embedder.id}` : 'nothing to re-embed: the index is empty' };
    if (json) print(result, true, io);
    else io.stdout(`${result.message}\n`);
    return 0;
  } finally {
    await composed.close();
    await serviceModels.close?.();
  }
}
