import * as schemas from '../schemas/index.js';
import { operation } from './operation.js';

export const billing = {
  get: operation({
    operationId: 'getBilling',
    method: 'GET',
    path: '/v1/billing',
    tag: 'Billing',
    summary: 'Credit balance, billing settings and ledger entries (newest first); readable with no credit left',
    status: 200,
    query: schemas.billingQuery,
    output: schemas.billing,
    codes: [],
  }),
};
