import { CONTRACT } from '@memory-agents/core/contract';
import { route } from '../route.js';

const { threads, sources } = CONTRACT;

/** Content-Disposition with the original filename (ASCII fallback plus RFC 5987 UTF-8 form). */
function disposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

export const documentRoutes = [
  route(threads.observeFile, async ({ service, caller, params, headers, upload, signal }) => ({
    body: await service.observeFile({
      caller,
      agentId: params.agent_id,
      threadId: params.thread_id,
      file: upload?.file ?? null,
      fields: upload?.fields ?? {},
      idempotencyKey: headers['idempotency-key'],
      abortSignal: signal,
    }),
  })),
  route(sources.list, async ({ service, caller, params }) => ({ body: await service.sources.list({ caller, agentId: params.agent_id, threadId: params.thread_id }) })),
  route(sources.finishLearning, async ({ service, caller, params, body }) => ({
    body: await service.sources.finishLearning({ caller, agentId: params.agent_id, threadId: params.thread_id, sourceId: params.source_id, body }),
  })),
  route(sources.get, async ({ service, caller, params }) => {
    const source = await service.sources.get({ caller, agentId: params.agent_id, sourceId: params.source_id });
    return { binary: source.data, headers: { 'Content-Type': source.mediaType, 'Content-Disposition': disposition(source.filename) } };
  }),
];
