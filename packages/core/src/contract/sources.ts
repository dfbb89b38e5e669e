import * as schemas from '../schemas/index.js';
import { CONVERSION_CODES } from './codes.js';
import { operation } from './operation.js';

const THREAD = '/v1/agents/{agent_id}/threads/{thread_id}';

export const sources = {
  list: operation({
    operationId: 'listThreadSources',
    method: 'GET',
    path: `${THREAD}/sources`,
    tag: 'Documents',
    summary: 'Documents uploaded in this thread, with their state and whether finish-learning can resume them',
    status: 200,
    output: schemas.sourcesResponse,
    endUser: true,
    codes: ['agent_not_found', 'thread_not_found'],
  }),
  finishLearning: operation({
    operationId: 'finishLearning',
    method: 'POST',
    path: `${THREAD}/sources/{source_id}/finish-learning`,
    tag: 'Documents',
    summary: 'Resume a stopped or failed upload from its stored copy (or read it again here)',
    status: 202,
    body: schemas.finishLearningBody,
    output: schemas.documentIngestResponse,
    endUser: true,
    codes: [
      'agent_not_found', 'agent_not_ready', 'thread_not_found', 'not_found', 'payment_required', 'conflict', 'duplicate_upload_in_progress',
      ...CONVERSION_CODES,
    ],
  }),
  get: operation({
    operationId: 'getSource',
    method: 'GET',
    path: '/v1/agents/{agent_id}/sources/{source_id}',
    tag: 'Documents',
    summary: 'The stored original of a document (what document citations link to)',
    status: 200,
    output: schemas.sourceBytes,
    response: 'binary',
    codes: ['agent_not_found', 'not_found'],
  }),
};
