import { Decimal } from 'decimal.js';
import type { Caller } from '../auth/caller.js';
import { ServiceError } from '../errors/index.js';
import type { Clock } from '../ports/clock.js';
import type { BillingAccountRecord, JobRecord, LearningReason, LedgerEntryRecord, Store, TurnRecord } from '../ports/store/index.js';
import type { BillingRequest } from '../service/requests.js';
import type { TelemetryObserver } from '../service/telemetry.js';
import { billingQuery, type BillingEntryBody } from '../schemas/billing.js';
import type { BillingOutput } from '../schemas/outputs.js';
import { parseQuery } from '../validation/parse.js';
import { ANSWER_RESERVATION_WORDS, DEFAULT_PRICES, billedWords, priceOf, resolvePrices, sumOf, type Prices } from './pricing.js';

/** Learning reason of turns that were not read because the balance could not cover them. */
export const CREDITS_EXHAUSTED_REASON = 'credits_exhausted' satisfies LearningReason;

/** A running answer's charge: settled with the answer's words, or cancelled when none came. */
export type AnswerHold = {
  settle(answer: string): Promise<void>;
  cancel(): Promise<void>;
};

const NO_HOLD: AnswerHold = { settle: async () => undefined, cancel: async () => undefined };

/** Ledger route of the turns a job reads, per job kind. */
const READ_ROUTES: Record<JobRecord['kind'], string> = { observe: 'observe', document: 'observe_file', respond: 'learn' };

function paymentRequired(message = 'The organization is out of credit; nothing was learned or answered. Add credits and retry.'): ServiceError {
  return new ServiceError('payment_required', message);
}

/** Whether an enabled account's balance covers `cost`: the balance must be above 0 and at least the cost. */
function covers(account: BillingAccountRecord, cost: string): boolean {
  const balance = new Decimal(account.balance);
  return balance.gt(0) && balance.gte(cost);
}

function entryBody(entry: LedgerEntryRecord): BillingEntryBody {
  return {
    entry_id: entry.entryId,
    route: entry.route,
    ...(entry.inWords >= 1 ? { in_words: entry.inWords } : {}),
    ...(entry.outWords >= 1 ? { out_words: entry.outWords } : {}),
    cost: entry.cost,
    created_at: entry.createdAt,
  };
}

/**
 * Credits: prices, 402 checks, charges, refunds and the billing view, over the store's ledger.
 * Usage is charged only while an organization's billing is enabled; refunds return whatever was
 * charged, whatever the setting is now.
 */
export function createCredits(deps: { store: Store; clock: Clock; prices?: Partial<Prices>; telemetry?: TelemetryObserver }) {
  const { store } = deps;
  const observe = deps.telemetry ?? (() => undefined);
  const report = (direction: 'charged' | 'refunded', cost: string) => {
    const credits = Number(cost);
    if (credits > 0) observe({ kind: 'credits', direction, credits });
  };
  const defaults: Prices = { ...DEFAULT_PRICES, ...deps.prices };
  const nowIso = () => new Date(deps.clock.now()).toISOString();

  async function enabledAccount(organizationId: string): Promise<BillingAccountRecord | null> {
    const account = await store.ledger.getAccount({ organizationId });
    return account && account.enabled ? account : null;
  }

  /** One charge of `words` input words at the input-word price, once per `reference` (a second call charges nothing); 402 when billing is on and the balance cannot cover it. */
  async function chargeWords(request: { organizationId: string; route: string; reference: string; words: number; refused: string }): Promise<string> {
    const account = await enabledAccount(request.organizationId);
    if (!account) return '0';
    const cost = priceOf(request.words, resolvePrices(account.prices, defaults).inputWord);
    const refused = () => paymentRequired(`The organization is out of credit; ${request.refused} (it costs ${cost} credits). Add credits and retry.`);
    if (!covers(account, cost)) throw refused();
    const result = await store.ledger.append({
      organizationId: request.organizationId,
      entry: { kind: 'charge', route: request.route, inWords: request.words, outWords: 0, cost, reference: request.reference, jobId: null, turnCosts: {}, createdAt: nowIso() },
      requireFunds: true,
    });
    if (!result.ok && result.reason === 'duplicate') return '0';
    if (!result.ok) throw refused();
    report('charged', cost);
    return cost;
  }

  return {
    defaultPrices: defaults,

    /**
     * 402 `payment_required` when billing is enabled and the balance cannot cover `inWords` input
     * words (or is <= 0). Called before a learning call stores anything.
     */
    async requireFunds(organizationId: string, inWords: number): Promise<void> {
      const account = await enabledAccount(organizationId);
      if (!account) return;
      const prices = resolvePrices(account.prices, defaults);
      if (!covers(account, priceOf(inWords, prices.inputWord))) throw paymentRequired();
    },

    /**
     * Charges an answer before it runs: the message's input words plus the reservation of its
     * `answer_length`, refused with 402 when the balance cannot cover them, atomically (parallel
     * answers never overdraw). `settle` lowers the charge to the answer's real words.
     */
    async holdAnswer(caller: Caller, request: { message: string; answerLength: keyof typeof ANSWER_RESERVATION_WORDS; route: string }): Promise<AnswerHold> {
      const account = await enabledAccount(caller.organizationId);
      if (!account) return NO_HOLD;
      const prices = resolvePrices(account.prices, defaults);
      const inWords = billedWords(request.message);
      const reserved = ANSWER_RESERVATION_WORDS[request.answerLength];
      const inCost = priceOf(inWords, prices.inputWord);
      const result = await store.ledger.append({
        organizationId: caller.organizationId,
        entry: {
          kind: 'charge',
          route: request.route,
          inWords,
          outWords: reserved,
          cost: sumOf([inCost, priceOf(reserved, prices.outputWord)]),
          reference: null,
          jobId: null,
          turnCosts: {},
          createdAt: nowIso(),
        },
        requireFunds: true,
      });
      if (!result.ok) throw paymentRequired();
      const entryId = result.entry.entryId;
      let done = false;
      return {
        async settle(answer) {
          if (done) return;
          done = true;
          const outWords = Math.min(billedWords(answer), reserved);
          const cost = sumOf([inCost, priceOf(outWords, prices.outputWord)]);
          await store.ledger.settle({ organizationId: caller.organizationId, entryId, outWords, cost });
          report('charged', cost);
        },
        async cancel() {
          if (done) return;
          done = true;
          await store.ledger.settle({ organizationId: caller.organizationId, entryId, outWords: 0, cost: '0', remove: true });
        },
      };
    },

    /**
     * Charges the application of a maintenance run (issue 43) as learning is charged: the input
     * words of the memories it changes, at the input-word price, route `maintenance`, once per run
     * (reference `maintenance:<runId>`: a second call charges nothing). 402 `payment_required` when
     * billing is on and the balance cannot cover it (nothing is applied then). Resolves the credits
     * charged ("0" with billing off or when already charged).
     */
    async chargeMaintenance(request: { organizationId: string; runId: string; words: number }): Promise<string> {
      return chargeWords({ organizationId: request.organizationId, route: 'maintenance', reference: `maintenance:${request.runId}`, words: request.words, refused: `maintenance run ${request.runId} was not applied` });
    },

    /**
     * Charges other memory work (issue 43: a reflection, a re-learning) as learning is charged: the
     * input words read, at the input-word price, under `route`, once per `reference`. 402
     * `payment_required` when billing is on and the balance cannot cover it (`refused` says what did
     * not happen).
     */
    async chargeWork(request: { organizationId: string; route: string; reference: string; words: number; refused: string }): Promise<string> {
      return chargeWords(request);
    },

    /**
     * Marks fresh (`pending`) turns of a job read and charges their input words, in one
     * transaction, so a turn is charged exactly once (a resumed job finds it `read` and never
     * charges it again). Turns the balance cannot cover are not read: they are returned in
     * `refused` (the caller fails them with `credits_exhausted`); nothing is charged for them.
     * With billing off nothing is charged and nothing is written: the turns stay `pending` until
     * they are learned (a resumed job reads them again, still free or charged if billing is on by then).
     */
    async readTurns(job: JobRecord, fresh: TurnRecord[]): Promise<{ read: TurnRecord[]; refused: TurnRecord[] }> {
      if (fresh.length === 0) return { read: [], refused: [] };
      // Billing off (the usual case): one account read, no write. Billing turned on right after
      // this read is the same as turned on just after the turns were read.
      if (!(await enabledAccount(job.organizationId))) return { read: fresh, refused: [] };
      let chargedCost = '0';
      const outcome = await store.transaction(async (tx) => {
        chargedCost = '0';
        const account = await tx.ledger.getAccount({ organizationId: job.organizationId });
        if (!account || !account.enabled) {
          await tx.turns.setStates({ jobId: job.id, turnIndexes: fresh.map((turn) => turn.turnIndex), state: 'read' });
          return { read: fresh, refused: [] };
        }
        const prices = resolvePrices(account.prices, defaults);
        const costs = fresh.map((turn) => ({ turn, words: billedWords(turn.text), cost: priceOf(billedWords(turn.text), prices.inputWord) }));
        // The longest prefix of the batch the balance covers (a turn never half-charged).
        let affordable = costs.length;
        let total = new Decimal(0);
        const balance = new Decimal(account.balance);
        for (let i = 0; i < costs.length; i++) {
          const next = total.plus(costs[i]!.cost);
          if (balance.lte(0) || next.gt(balance)) {
            affordable = i;
            break;
          }
          total = next;
        }
        const charged = costs.slice(0, affordable);
        if (charged.length > 0) {
          const result = await tx.ledger.append({
            organizationId: job.organizationId,
            entry: {
              kind: 'charge',
              route: READ_ROUTES[job.kind],
              inWords: charged.reduce((sum, item) => sum + item.words, 0),
              outWords: 0,
              cost: total.toFixed(),
              reference: `read:${job.id}:${charged[0]!.turn.turnIndex}`,
              jobId: job.id,
              turnCosts: Object.fromEntries(charged.map((item) => [String(item.turn.turnIndex), item.cost])),
              createdAt: nowIso(),
            },
            requireFunds: true,
          });
          // `duplicate`: already charged under this reference; `insufficient`: another charge won the race.
          if (!result.ok && result.reason !== 'duplicate') return { read: [], refused: fresh };
          if (result.ok) chargedCost = total.toFixed();
          await tx.turns.setStates({ jobId: job.id, turnIndexes: charged.map((item) => item.turn.turnIndex), state: 'read' });
        }
        return { read: charged.map((item) => item.turn), refused: costs.slice(affordable).map((item) => item.turn) };
      });
      report('charged', chargedCost);
      return outcome;
    },

    /**
     * Refunds the input side of a job's turns that were charged and not learned, at most once per
     * job (a refund entry under the reference `refund:<jobId>`). Resolves the credits refunded, or
     * null when none of those turns was charged.
     */
    async refundTurns(job: JobRecord, turnIndexes: number[]): Promise<string | null> {
      const entries = await store.ledger.listForJob({ organizationId: job.organizationId, jobId: job.id });
      const previous = entries.find((entry) => entry.kind === 'refund');
      if (previous) return new Decimal(previous.cost).neg().toFixed();
      const wanted = new Set(turnIndexes.map(String));
      const refunded: string[] = [];
      const chargedTurns = new Set<string>();
      for (const entry of entries) {
        if (entry.kind !== 'charge') continue;
        for (const [turnIndex, cost] of Object.entries(entry.turnCosts)) {
          if (!wanted.has(turnIndex)) continue;
          refunded.push(cost);
          chargedTurns.add(turnIndex);
        }
      }
      if (refunded.length === 0) return null;
      const amount = sumOf(refunded);
      if (new Decimal(amount).isZero()) return '0';
      const result = await store.ledger.append({
        organizationId: job.organizationId,
        entry: {
          kind: 'refund',
          route: 'refund',
          inWords: await refundedWords(job, chargedTurns),
          outWords: 0,
          cost: new Decimal(amount).neg().toFixed(),
          reference: `refund:${job.id}`,
          jobId: job.id,
          turnCosts: {},
          createdAt: nowIso(),
        },
        requireFunds: false,
      });
      if (result.ok) {
        report('refunded', amount);
        return amount;
      }
      // Another settle of the same job refunded first: report that refund.
      const again = (await store.ledger.listForJob({ organizationId: job.organizationId, jobId: job.id })).find((entry) => entry.kind === 'refund');
      return again ? new Decimal(again.cost).neg().toFixed() : null;
    },

    /** `GET /v1/billing`: settings, balance and entries newest first. Readable with no credit. */
    async billing({ caller, query = {} }: BillingRequest): Promise<BillingOutput> {
      const { limit, cursor } = parseQuery(billingQuery, query);
      const account = await store.ledger.getAccount({ organizationId: caller.organizationId });
      const before = cursor === undefined ? undefined : Math.min(Number(cursor), Number.MAX_SAFE_INTEGER);
      const entries = account
        ? await store.ledger.list({ organizationId: caller.organizationId, limit: limit + 1, ...(before === undefined ? {} : { beforeEntryId: before }) })
        : [];
      const page = entries.slice(0, limit);
      return {
        organization_id: caller.organizationId,
        enabled: account?.enabled ?? false,
        balance: account ? account.balance : null,
        low_credit_threshold: account?.lowCreditThreshold ?? '0',
        entries: page.map(entryBody),
        next_cursor: entries.length > limit ? page.at(-1)!.entryId : null,
      };
    },
  };

  /** Words of the job's turns in `wanted` (the refund's input side). */
  async function refundedWords(job: JobRecord, wanted: Set<string>): Promise<number> {
    let words = 0;
    for (let fromIndex = 0; ; ) {
      const page = await store.turns.list({ jobId: job.id, fromIndex, limit: 1000 });
      if (page.length === 0) return words;
      for (const turn of page) if (wanted.has(String(turn.turnIndex))) words += billedWords(turn.text);
      fromIndex = page.at(-1)!.turnIndex + 1;
    }
  }
}

export type Credits = ReturnType<typeof createCredits>;
