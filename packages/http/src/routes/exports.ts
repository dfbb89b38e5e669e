import { schemas } from '@memory-agents/core';
import { route } from '../route.js';

const EXPORTS = '/v1/agents/{agent_id}/exports';

/** Export jobs of an organization's own agents (an extension, issue 34). */
export const exportRoutes = [
  route({
    method: 'POST',
    path: EXPORTS,
    operationId: 'createExport',
    tag: 'Exports',
    summary: 'Start exporting the agent (202 with an exp_ id; poll its status, then download)',
    status: 202,
    body: schemas.createExportBody,
    response: schemas.exportJob,
    codes: ['agent_not_found', 'forbidden'],
    handler: async ({ service, caller, params, body }) => ({
      body: await service.exports.create({ caller, agentId: params.agent_id, body: (body ?? undefined) as { vectors?: boolean } | undefined }),
    }),
  }),
  route({
    method: 'GET',
    path: `${EXPORTS}/{export_id}`,
    operationId: 'getExport',
    tag: 'Exports',
    summary: 'The status of an export job',
    status: 200,
    response: schemas.exportJob,
    codes: ['agent_not_found', 'forbidden', 'not_found'],
    handler: async ({ service, caller, params }) => ({
      body: await service.exports.get({ caller, agentId: params.agent_id, exportId: params.export_id }),
    }),
  }),
  route({
    method: 'GET',
    path: `${EXPORTS}/{export_id}/download`,
    operationId: 'downloadExport',
    tag: 'Exports',
    summary: 'The export file once ready (application/x-ndjson)',
    status: 200,
    response: schemas.exportFile,
    binary: true,
    codes: ['agent_not_found', 'forbidden', 'not_found', 'conflict'],
    handler: async ({ service, caller, params }) => {
      const file = await service.exports.download({ caller, agentId: params.agent_id, exportId: params.export_id });
      return { binary: { chunks: file.chunks, bytes: file.bytes }, headers: { 'Content-Type': file.mediaType, 'Content-Disposition': `attachment; filename="${file.filename}"` } };
    },
  }),
];
