import * as schemas from '../schemas/index.js';
import { operation } from './operation.js';

const REVIEW = '/v1/agents/{agent_id}/review';
const ITEM = `${REVIEW}/{memory_id}` as const;

/**
 * The review queue of an agent (an extension, issue 43; docs/api.md "Review"): the memories its
 * `review_mode` held, approved, declined, edited and undone, each decision kept with who and when.
 * Organization-level: `X-SP-End-User` is 403.
 */
export const reviewOperations = {
  list: operation({
    operationId: 'listReview',
    method: 'GET',
    path: REVIEW,
    tag: 'Memories',
    summary: 'The memories waiting for review (or approved, or declined), oldest proposal first, each with its decisions and hidden characters',
    status: 200,
    query: schemas.reviewListQuery,
    queryValidates: true,
    output: schemas.reviewList,
    codes: ['agent_not_found', 'forbidden'],
  }),
  approve: operation({
    operationId: 'approveReview',
    method: 'POST',
    path: `${ITEM}/approve`,
    tag: 'Memories',
    summary: 'Approve a pending memory: chat, recall and search use it from now on, and the memories it replaces (still current) are superseded',
    status: 200,
    output: schemas.reviewItem,
    codes: ['agent_not_found', 'forbidden', 'not_found', 'conflict'],
  }),
  decline: operation({
    operationId: 'declineReview',
    method: 'POST',
    path: `${ITEM}/decline`,
    tag: 'Memories',
    summary: 'Decline a pending memory (an optional reason): it stays hidden, and learning never proposes the same words again',
    status: 200,
    body: schemas.reviewDeclineBody,
    output: schemas.reviewItem,
    codes: ['agent_not_found', 'forbidden', 'not_found', 'conflict'],
  }),
  edit: operation({
    operationId: 'editReview',
    method: 'PATCH',
    path: ITEM,
    tag: 'Memories',
    summary: "Change a pending memory's text before deciding (embedded again)",
    status: 200,
    body: schemas.reviewEditBody,
    output: schemas.reviewItem,
    codes: ['agent_not_found', 'forbidden', 'not_found', 'conflict'],
  }),
  reflect: operation({
    operationId: 'reflectReview',
    method: 'POST',
    path: `${REVIEW}/reflect`,
    tag: 'Memories',
    summary: "A reflection (needs a language model): the model reads the agent's newest memories and proposes facts they imply together, each pending review",
    status: 201,
    body: schemas.reviewReflectBody,
    output: schemas.reviewReflection,
    idempotent: true,
    codes: ['agent_not_found', 'forbidden', 'payment_required', 'answer_model_unavailable', 'service_not_configured'],
  }),
  relearn: operation({
    operationId: 'relearnReview',
    method: 'POST',
    path: `${REVIEW}/relearn`,
    tag: 'Memories',
    summary: "Re-learn a thread (or every thread) under the current writer and extraction policy: each memory that now reads differently is proposed pending review, replacing the turn's current ones once approved",
    status: 201,
    body: schemas.reviewRelearnBody,
    output: schemas.reviewRelearning,
    idempotent: true,
    codes: ['agent_not_found', 'thread_not_found', 'forbidden', 'payment_required'],
  }),
  undo: operation({
    operationId: 'undoReview',
    method: 'POST',
    path: `${ITEM}/undo`,
    tag: 'Memories',
    summary: 'Reverse the last approve or decline within the restore window: the memory is pending again',
    status: 200,
    output: schemas.reviewItem,
    codes: ['agent_not_found', 'forbidden', 'not_found', 'conflict'],
  }),
};
