import type { JobRecord, JobStore, StoreAreas, WebhookEventType } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';

export type { WebhookEmitter } from './emitter.js';

/** The `data` of `erasure.finished` (the erasure work defines what it erased; these fields at least). */
export type ErasureFinishedData = {
  /** The erasure's id, as its own API names it. */
  erasure_id: string;
  /** Whose data was erased: an agent, an end user (`eu_`), or null for the organization's own. */
  agent_id: string | null;
  end_user_id: string | null;
  status: 'completed' | 'failed';
  finished_at: string;
} & Record<string, unknown>;

/**
 * Records `erasure.finished` for the organization's webhooks; a no-op when webhooks are off. The
 * erasure work calls it once its erasure is final (in its final transaction when it has one:
 * pass that transaction's `store`).
 */
export async function emitErasureFinished(context: ServiceContext, { organizationId, data, store }: { organizationId: string; data: ErasureFinishedData; store?: StoreAreas }): Promise<void> {
  const emitter = context.webhooks;
  if (!emitter) return;
  await emitter.record(store ?? context.store, { organizationId, type: 'erasure.finished', orderingKey: `erasure:${data.agent_id ?? data.end_user_id ?? organizationId}`, data });
  emitter.kick();
}

/** The events of a job that reached `committed` or `failed`. */
function jobEvents(job: JobRecord): { type: WebhookEventType; data: Record<string, unknown> }[] {
  if (job.status !== 'committed' && job.status !== 'failed') return [];
  const common = { observation_id: job.id, agent_id: job.agentId, thread_id: job.threadId, status: job.status };
  const learning = job.learning ? { ranges: job.learning.ranges, reason: job.learning.reason, message: job.learning.message } : null;
  const events: { type: WebhookEventType; data: Record<string, unknown> }[] = [
    {
      type: job.status === 'committed' ? 'observation.committed' : 'observation.failed',
      data: { ...common, kind: job.kind, turns_total: job.turnsTotal, error: job.error, not_learned: learning },
    },
  ];
  if (job.kind === 'document') {
    events.push({ type: 'upload.finished', data: { ...common, source_id: job.details.sourceId, filename: job.details.filename, turns_total: job.turnsTotal, error: job.error } });
  }
  return events;
}

/**
 * `store.jobs.update` that also records the webhook events of a job it settles (`committed`,
 * `failed`) in the same transaction, so an event is never lost to a crash between the two
 * (at least once). Without webhooks it is the plain update.
 */
export async function updateJobWithEvents(context: ServiceContext, request: Parameters<JobStore['update']>[0]): Promise<JobRecord | null> {
  const emitter = context.webhooks;
  if (!emitter) return context.store.jobs.update(request);
  const settled = await context.store.transaction(async (store) => {
    const job = await store.jobs.update(request);
    if (job) for (const event of jobEvents(job)) await emitter.record(store, { organizationId: job.organizationId, type: event.type, orderingKey: `thread:${job.threadId}`, data: event.data });
    return job;
  });
  if (settled) emitter.kick();
  return settled;
}
