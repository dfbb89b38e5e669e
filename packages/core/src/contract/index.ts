/**
 * `@memory-agents/core/contract`: every operation of the `/v1` API, written once (issue 40). It
 * imports only zod schemas and types, so the HTTP layer, the OpenAPI document and the client's
 * generator read it without pulling in server code. Grouped as the client groups its calls.
 */
import { agents } from './agents.js';
import { billing } from './billing.js';
import { erasures } from './erasures.js';
import { exportOperations } from './exports.js';
import { images } from './images.js';
import { maintenanceOperations } from './maintenance.js';
import { memories } from './memories.js';
import { reviewOperations } from './review.js';
import type { Operation } from './operation.js';
import { session } from './session.js';
import { sources } from './sources.js';
import { threads } from './threads.js';
import { webhooks } from './webhooks.js';

export { operation, type HttpMethod, type Operation, type OperationBody, type OperationOutput, type OperationTag, type PathParams, type ResponseKind, type UploadForm } from './operation.js';

/** Every operation, by group and name: `CONTRACT.threads.observe` is `POST .../observe`, the client's `threads.observe`. */
export const CONTRACT = { session, agents, threads, memories, sources, images, erasures, exports: exportOperations, maintenance: maintenanceOperations, review: reviewOperations, billing, webhooks };

export type Contract = typeof CONTRACT;
export type OperationGroup = keyof Contract;

/** One operation with where it sits in the contract. */
export type ContractEntry = { group: OperationGroup; name: string; operation: Operation };

/** The contract as a list, in table order. */
export const CONTRACT_ENTRIES: readonly ContractEntry[] = Object.entries(CONTRACT).flatMap(([group, operations]) =>
  Object.entries(operations as Record<string, Operation>).map(([name, operation]) => ({ group: group as OperationGroup, name, operation })),
);
