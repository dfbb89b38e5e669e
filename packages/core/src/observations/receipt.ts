import { sumOf } from '../credits/pricing.js';
import { redactionsIn } from '../policy/redaction.js';
import { ServiceError } from '../errors/index.js';
import { FINAL_JOB_STATUSES, type JobRecord, type TurnRecord } from '../ports/store/index.js';
import type { ObservationReceiptOutput } from '../schemas/outputs.js';
import type { ServiceContext } from '../service/context.js';
import { receiptModelTokens, toModelTokens } from './model-usage.js';

/** Page size of the index list and the turn reads a receipt makes. */
const PAGE = 1000;

/**
 * The receipt of a final job (issue 33): per turn its outcome (`learned`, `merged` into an existing
 * memory as a near-duplicate, or `skipped` with a reason), the memory ids it wrote (listed from
 * the index by observation id, history included) or was merged into, the memories it superseded
 * (both recorded by learning in `store.jobs`), the model tokens its learning batches used
 * (recorded per batch in `store.jobs`, split over the batch's turns by text length), and its
 * credits with the ledger entries of the job that hold them; and what the agent's extraction policy
 * did to it (issue 44): redacted, excluded, memories dropped.
 */
export async function buildReceipt(context: ServiceContext, job: JobRecord): Promise<ObservationReceiptOutput> {
  if (!FINAL_JOB_STATUSES.includes(job.status)) {
    throw new ServiceError('conflict', `Observation ${job.id} is ${job.status}: its receipt exists once it is committed, failed or cancelled (poll the status).`);
  }
  const [turns, memoryIds, supersessions, merges, usage, entries, drops] = await Promise.all([
    allTurns(context, job),
    memoriesOf(context, job),
    context.store.receipts.supersessions({ jobId: job.id }),
    context.store.receipts.merges({ jobId: job.id }),
    context.store.receipts.modelUsage({ jobId: job.id }),
    context.store.ledger.listForJob({ organizationId: job.organizationId, jobId: job.id }),
    context.store.receipts.policyDrops({ jobId: job.id }),
  ]);
  const droppedOf = new Map<number, { category: string | null; rule: string }[]>();
  for (const { turnIndex, category, rule } of drops) droppedOf.set(turnIndex, [...(droppedOf.get(turnIndex) ?? []), { category, rule }]);
  const supersededBy = new Map(supersessions.map((entry) => [entry.turnIndex, entry.memoryIds]));
  const mergedInto = new Map(merges.map((merge) => [merge.turnIndex, merge.memoryId]));
  const refund = entries.find((entry) => entry.kind === 'refund');
  const ledgerEntries = entries.filter((entry) => entry.kind === 'charge' || entry.kind === 'refund');
  const textLengths = new Map(turns.map((turn) => [turn.turnIndex, turn.text.length]));
  const tokens = receiptModelTokens(usage, (turnIndex) => textLengths.get(turnIndex) ?? 0);
  return {
    agent_id: job.agentId,
    thread_id: job.threadId,
    observation_id: job.id,
    status: job.status as ObservationReceiptOutput['status'],
    turns: turns.map((turn) => {
      const key = String(turn.turnIndex);
      const charges = entries.filter((entry) => entry.kind === 'charge' && entry.turnCosts[key] !== undefined);
      const charged = charges.length === 0 ? '0' : sumOf(charges.map((entry) => entry.turnCosts[key]!));
      // The job's one refund entry returns the charges of its failed turns (credits.refundTurns).
      const refunded = refund && turn.state === 'failed' && charges.length > 0 ? charged : '0';
      const learned = turn.state === 'committed';
      const excludedBy = turn.details.excludedBy;
      // A near-duplicate merged into an existing memory wrote none: its memory is that one.
      const merged = learned ? mergedInto.get(turn.turnIndex) : undefined;
      return {
        turn_index: turn.turnIndex,
        outcome: merged !== undefined ? ('merged' as const) : learned && excludedBy === undefined ? ('learned' as const) : ('skipped' as const),
        reason: learned ? (excludedBy === undefined ? null : 'excluded_by_policy') : (turn.failureReason ?? (job.status === 'cancelled' ? 'cancelled' : 'generation_failed')),
        excluded_by: excludedBy ?? null,
        dropped: droppedOf.get(turn.turnIndex) ?? [],
        memory_ids: merged !== undefined ? [merged] : (memoryIds.get(turn.turnIndex) ?? []),
        superseded: supersededBy.get(turn.turnIndex) ?? [],
        redacted: Object.entries(redactionsIn(turn.text)).map(([kind, count]) => ({ kind, count })),
        model_tokens: toModelTokens(tokens.byTurn.get(turn.turnIndex) ?? []),
        charged_credits: charged,
        refunded_credits: refunded,
        ledger_entry_ids: [...charges.map((entry) => entry.entryId), ...(refund && turn.state === 'failed' && charges.length > 0 ? [refund.entryId] : [])],
      };
    }),
    superseded_without_successor: supersededBy.get(null) ?? [],
    model_tokens: toModelTokens(tokens.total),
    net_credits: ledgerEntries.length === 0 ? '0' : sumOf(ledgerEntries.map((entry) => entry.cost)),
    ledger_entries: ledgerEntries.map((entry) => ({ entry_id: entry.entryId, kind: entry.kind as 'charge' | 'refund', cost: entry.cost, created_at: entry.createdAt })),
  };
}

async function allTurns(context: ServiceContext, job: JobRecord): Promise<TurnRecord[]> {
  const found: TurnRecord[] = [];
  for (let fromIndex = 0; ; ) {
    const page = await context.store.turns.list({ jobId: job.id, fromIndex, limit: PAGE });
    found.push(...page);
    if (page.length < PAGE) return found;
    fromIndex = page.at(-1)!.turnIndex + 1;
  }
}

/** The job's memory ids by turn, in piece order (ids are `mem_<job>_<turn>_<piece>`). */
async function memoriesOf(context: ServiceContext, job: JobRecord): Promise<Map<number, string[]>> {
  const byTurn = new Map<number, { id: string; piece: number }[]>();
  let cursor: string | null = null;
  do {
    const page = await context.index.list({ agentId: job.agentId, observationId: job.id, includeHistory: true, limit: PAGE, cursor });
    for (const record of page.records) {
      const piece = Number(record.id.slice(record.id.lastIndexOf('_') + 1));
      const list = byTurn.get(record.source.turnIndex) ?? [];
      list.push({ id: record.id, piece: Number.isFinite(piece) ? piece : 0 });
      byTurn.set(record.source.turnIndex, list);
    }
    cursor = page.nextCursor;
  } while (cursor);
  return new Map([...byTurn].map(([turn, list]) => [turn, list.sort((a, b) => a.piece - b.piece || (a.id < b.id ? -1 : 1)).map((item) => item.id)]));
}
