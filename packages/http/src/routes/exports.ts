import { CONTRACT } from '@memory-agents/core/contract';
import { route } from '../route.js';

const { exports } = CONTRACT;

/** Export jobs of an organization's own agents (an extension, issue 34). */
export const exportRoutes = [
  route(exports.create, async ({ service, caller, params, body }) => ({
    body: await service.exports.create({ caller, agentId: params.agent_id, body: body ?? undefined }),
  })),
  route(exports.get, async ({ service, caller, params }) => ({
    body: await service.exports.get({ caller, agentId: params.agent_id, exportId: params.export_id }),
  })),
  route(exports.download, async ({ service, caller, params }) => {
    const file = await service.exports.download({ caller, agentId: params.agent_id, exportId: params.export_id });
    return { binary: { chunks: file.chunks, bytes: file.bytes }, headers: { 'Content-Type': file.mediaType, 'Content-Disposition': `attachment; filename="${file.filename}"` } };
  }),
];
