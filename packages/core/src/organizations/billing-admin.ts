import { Decimal } from 'decimal.js';
import { z } from 'zod';
import { ServiceError } from '../errors/index.js';
import type { Admin, OrganizationSummary } from './admin.js';
import type { Clock } from '../ports/clock.js';
import type { LimitOverrides } from '../ports/limit-overrides.js';
import type { PriceOverrides, Store } from '../ports/store/index.js';
import { parseBody } from '../validation/parse.js';

const amount = z.string().trim().regex(/^\d+(\.\d+)?$/, 'a decimal number >= 0, like 100 or 2.5');
const positiveAmount = amount.refine((value) => new Decimal(value).gt(0), 'greater than 0');
const pricesSchema = z.object({ inputWord: amount, outputWord: amount }).partial().strict();
const configureSchema = z
  .object({ organizationId: z.string().min(1), enabled: z.boolean().optional(), lowCreditThreshold: amount.optional(), prices: pricesSchema.optional() })
  .strict();

/** An organization's billing as the admin commands print it. */
export type BillingSummary = {
  organizationId: string;
  enabled: boolean;
  balance: string | null;
  lowCreditThreshold: string;
  prices: PriceOverrides;
  /** True when enabled and the balance is at or under the threshold (a warning only). */
  lowCredit: boolean;
};

/**
 * The administrator's credit operations (no HTTP endpoint, like keys): grant credits, switch
 * billing on or off, set the low-credit threshold and price overrides.
 */
export function createBillingAdmin(deps: { store: Store; clock: Clock }) {
  const { store } = deps;
  const nowIso = () => new Date(deps.clock.now()).toISOString();

  async function requireOrganization(organizationId: string): Promise<void> {
    if (!(await store.organizations.get({ id: organizationId }))) throw new ServiceError('not_found', `Organization ${organizationId} does not exist.`);
  }

  async function summary(organizationId: string): Promise<BillingSummary> {
    const account = await store.ledger.getAccount({ organizationId });
    return {
      organizationId,
      enabled: account?.enabled ?? false,
      balance: account?.balance ?? null,
      lowCreditThreshold: account?.lowCreditThreshold ?? '0',
      prices: account?.prices ?? {},
      lowCredit: account !== null && account.enabled && new Decimal(account.balance).lte(account.lowCreditThreshold),
    };
  }

  async function addCredits(input: { organizationId: string; amount: string }): Promise<BillingSummary & { entryId: number }> {
    const value = parseBody(positiveAmount, input.amount, 'amount');
    await requireOrganization(input.organizationId);
    // Opening the account leaves `enabled` as it is (off for a new one); `billing enable` switches it.
    await store.ledger.configure({ organizationId: input.organizationId, patch: {} });
    const result = await store.ledger.append({
      organizationId: input.organizationId,
      entry: {
        kind: 'grant',
        route: 'credits_add',
        inWords: 0,
        outWords: 0,
        cost: new Decimal(value).neg().toFixed(),
        reference: null,
        jobId: null,
        turnCosts: {},
        createdAt: nowIso(),
      },
      requireFunds: false,
    });
    if (!result.ok) throw new ServiceError('conflict', 'The credits could not be added.');
    return { ...(await summary(input.organizationId)), entryId: result.entry.entryId };
  }

  return {
    getBilling: async (input: { organizationId: string }) => {
      await requireOrganization(input.organizationId);
      return summary(input.organizationId);
    },

    /** Adds `amount` (> 0) credits as a grant entry; opens the account when missing. */
    addCredits,

    /** Switches billing on or off and sets the low-credit threshold and price overrides. */
    async configureBilling(input: { organizationId: string; enabled?: boolean; lowCreditThreshold?: string; prices?: PriceOverrides }): Promise<BillingSummary> {
      const parsed = parseBody(configureSchema, input, 'billing settings');
      await requireOrganization(parsed.organizationId);
      await store.ledger.configure({
        organizationId: parsed.organizationId,
        patch: {
          ...(parsed.enabled === undefined ? {} : { enabled: parsed.enabled }),
          ...(parsed.lowCreditThreshold === undefined ? {} : { lowCreditThreshold: parsed.lowCreditThreshold }),
          ...(parsed.prices === undefined ? {} : { prices: parsed.prices as PriceOverrides }),
        },
      });
      return summary(parsed.organizationId);
    },

    /**
     * `createOrganization` with `credits`: billing enabled and the balance starting at that amount
     * (`"0"`: enabled with no credit, so learning and answering answer 402 until credits are added).
     */
    withCredits(admin: Admin) {
      return async (input: { name: string; limits?: LimitOverrides; credits?: string }): Promise<OrganizationSummary & { balance: string | null }> => {
        const credits = input.credits === undefined ? undefined : parseBody(amount, input.credits, 'credits');
        const organization = await admin.createOrganization({ name: input.name, ...(input.limits ? { limits: input.limits } : {}) });
        if (credits === undefined) return { ...organization, balance: null };
        await store.ledger.configure({ organizationId: organization.organizationId, patch: { enabled: true } });
        if (new Decimal(credits).gt(0)) await addCredits({ organizationId: organization.organizationId, amount: credits });
        return { ...organization, balance: (await summary(organization.organizationId)).balance };
      };
    },
  };
}

export type BillingAdmin = ReturnType<typeof createBillingAdmin>;
