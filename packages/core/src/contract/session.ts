import * as schemas from '../schemas/index.js';
import { operation } from './operation.js';

export const session = {
  get: operation({
    operationId: 'getSession',
    method: 'GET',
    path: '/v1/session',
    tag: 'Session',
    summary: 'Which organization the key resolves to, and its upload limits',
    status: 200,
    output: schemas.session,
    endUser: true,
    codes: [],
  }),
};
