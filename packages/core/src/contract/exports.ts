import * as schemas from '../schemas/index.js';
import { operation } from './operation.js';

const EXPORTS = '/v1/agents/{agent_id}/exports';

/** Export jobs of an organization's own agents (an extension, issue 34). */
export const exportOperations = {
  create: operation({
    operationId: 'createExport',
    method: 'POST',
    path: EXPORTS,
    tag: 'Exports',
    summary: 'Start exporting the agent (202 with an exp_ id; poll its status, then download)',
    status: 202,
    body: schemas.createExportBody,
    output: schemas.exportJob,
    codes: ['agent_not_found', 'forbidden'],
  }),
  get: operation({
    operationId: 'getExport',
    method: 'GET',
    path: `${EXPORTS}/{export_id}`,
    tag: 'Exports',
    summary: 'The status of an export job',
    status: 200,
    output: schemas.exportJob,
    codes: ['agent_not_found', 'forbidden', 'not_found'],
  }),
  download: operation({
    operationId: 'downloadExport',
    method: 'GET',
    path: `${EXPORTS}/{export_id}/download`,
    tag: 'Exports',
    summary: 'The export file once ready (application/x-ndjson)',
    status: 200,
    output: schemas.exportFile,
    response: 'binary',
    codes: ['agent_not_found', 'forbidden', 'not_found', 'conflict'],
  }),
};
