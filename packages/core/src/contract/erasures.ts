import * as schemas from '../schemas/index.js';
import { operation } from './operation.js';

/** Erasure (an extension, issue 30): remove everything derived from a source, thread, observation or end user. */
export const erasures = {
  erase: operation({
    operationId: 'eraseMemories',
    method: 'POST',
    path: '/v1/agents/{agent_id}/memories/erase',
    tag: 'Memories',
    summary: 'Erase everything derived from one source, thread, observation or end user, as a job (202)',
    status: 202,
    body: schemas.eraseBody,
    output: schemas.erasure,
    endUser: true,
    codes: ['agent_not_found', 'thread_not_found', 'not_found'],
  }),
  get: operation({
    operationId: 'getErasure',
    method: 'GET',
    path: '/v1/agents/{agent_id}/erasures/{erasure_id}',
    tag: 'Memories',
    summary: 'An erasure job: its status and what it removed',
    status: 200,
    output: schemas.erasure,
    endUser: true,
    codes: ['agent_not_found', 'not_found'],
  }),
};
