import type { BillingSummary, MemoryService } from '@memory-agents/core';
import { decimal, required, STATE_OPTIONS, UsageError, type CliValues, type OptionName } from './cli-options.js';

/**
 * One admin command of the CLI, whole: its usage, the flags it takes, how its flags become its
 * arguments, and what it does on the service. The CLI runs it in process (no server on the data)
 * or sends its flags over the control socket to the running server, which parses and runs the
 * same entry, so both paths print the same JSON.
 */
export type AdminCommandSpec<Args> = {
  /** The usage line(s), `memory-agents orgs create ...`, shown by `help` and on usage errors. */
  usage: string;
  /** The flags it takes besides `--data`/`--database-url` and the global ones. */
  options: readonly OptionName[];
  /** Its arguments from its flags; throws `UsageError` naming what is missing or wrong. */
  parse(values: CliValues, command: string): Args;
  run(service: MemoryService, args: Args): Promise<unknown>;
};

/** Declares an entry, inferring `Args` from `parse` so `run` is checked against it. */
const admin = <Args>(spec: AdminCommandSpec<Args>): AdminCommandSpec<Args> => ({ ...spec, options: [...spec.options, ...STATE_OPTIONS] });

type LimitOverrides = Parameters<MemoryService['admin']['setLimits']>[0]['limits'];

/** An organization's billing as the CLI prints it (snake_case, like the API). */
function billingRow(billing: BillingSummary) {
  return {
    organization_id: billing.organizationId,
    enabled: billing.enabled,
    balance: billing.balance,
    low_credit_threshold: billing.lowCreditThreshold,
    low_credit: billing.lowCredit,
  };
}

const org = (values: CliValues, command: string) => ({ organizationId: required(values.org, command, '--org ORG_ID') });
const orgAndAmount = (values: CliValues, command: string) => {
  if (!values.org || values.amount === undefined) throw new UsageError(`${command} needs --org ORG_ID --amount DECIMAL`, command);
  return { organizationId: values.org, amount: decimal(values.amount, '--amount', command) };
};
const billingSwitch = (enabled: boolean) =>
  admin({
    usage: `memory-agents billing ${enabled ? 'enable' : 'disable'} --org ORG_ID [--json]`,
    options: ['org'],
    parse: org,
    run: async (service, { organizationId }) => billingRow(await service.admin.configureBilling({ organizationId, enabled })),
  });

/** A re-embed's progress as the CLI prints it (snake_case, like the API), or a line saying there is none. */
export async function reembedRow(service: MemoryService) {
  const status = await service.reembedding.status();
  if (!status) return { reembedding: 'none' };
  return { reembedding: `${status.done} of ${status.total} memories`, from: status.from.id, to: status.to.id, done: status.done, total: status.total, running: status.running };
}

/** The admin commands, by the name the control socket carries (`orgs.create` is `orgs create`). */
export const ADMIN_COMMANDS = {
  'reembed.status': admin({
    usage: `memory-agents reembed status [--json]
  Whether the memory index is being re-embedded for a new embedder, and how far: done of total
  memories (every agent, history too), from and to which embedder. A server re-embeds by itself
  when it starts with another embedder than the index's; learning waits and search uses full text
  until it finishes.`,
    options: [],
    parse: () => ({}),
    run: (service) => reembedRow(service),
  }),
  'orgs.create': admin({
    usage: `memory-agents orgs create --name NAME [--credits DECIMAL] [--json]
  --credits enables billing with that starting balance (--credits 0: billing on, no credit).`,
    options: ['name', 'credits'],
    parse: (values, command) => ({
      name: required(values.name, command, '--name NAME'),
      ...(values.credits === undefined ? {} : { credits: decimal(values.credits, '--credits', command) }),
    }),
    run: async (service, input) => {
      const created = await service.admin.createOrganization(input);
      return { organization_id: created.organizationId, name: created.name, balance: created.balance };
    },
  }),
  'orgs.list': admin({
    usage: 'memory-agents orgs list [--json]',
    options: [],
    parse: () => ({}),
    run: async (service) => (await service.admin.listOrganizations()).map((o) => ({ organization_id: o.organizationId, name: o.name, created_at: o.createdAt })),
  }),
  'orgs.limits': admin({
    usage: `memory-agents orgs limits --org ORG_ID --limits JSON [--json]
  Replaces the organization's limit overrides whole, e.g.
  --limits '{"rateLimits":{"chat":{"subject":{"limit":50,"windowSeconds":60}}}}'`,
    options: ['org', 'limits'],
    parse: (values, command) => {
      if (!values.org || values.limits === undefined) throw new UsageError(`${command} needs --org ORG_ID --limits JSON`, command);
      try {
        // The service validates the shape (absent fields use the defaults).
        return { organizationId: values.org, limits: JSON.parse(values.limits) as LimitOverrides };
      } catch {
        throw new UsageError('--limits must be JSON, e.g. {"rateLimits":{"chat":{"subject":{"limit":50,"windowSeconds":60}}}}', command);
      }
    },
    run: async (service, input) => {
      const updated = await service.admin.setLimits(input);
      return { organization_id: updated.organizationId, limits: updated.limits };
    },
  }),
  'keys.create': admin({
    usage: 'memory-agents keys create --org ORG_ID [--json]   (the key is shown once)',
    options: ['org'],
    parse: org,
    run: async (service, input) => {
      const key = await service.admin.createKey(input);
      return { key: key.key, key_id: key.keyId, organization_id: key.organizationId, expires_at: key.expiresAt };
    },
  }),
  'keys.list': admin({
    usage: 'memory-agents keys list --org ORG_ID [--json]',
    options: ['org'],
    parse: org,
    run: async (service, input) =>
      (await service.admin.listKeys(input)).map((key) => ({
        key_id: key.keyId,
        organization_id: key.organizationId,
        status: key.status,
        created_at: key.createdAt,
        expires_at: key.expiresAt,
        revoked_at: key.revokedAt,
        expiring_soon: key.expiringSoon,
      })),
  }),
  'keys.revoke': admin({
    usage: 'memory-agents keys revoke --key-id KEY_ID [--json]   (effective on the very next request)',
    options: ['key-id'],
    parse: (values, command) => ({ keyId: required(values['key-id'], command, '--key-id KEY_ID') }),
    run: async (service, input) => {
      const key = await service.admin.revokeKey(input);
      return { key_id: key.keyId, organization_id: key.organizationId, status: key.status, revoked_at: key.revokedAt };
    },
  }),
  'credits.add': admin({
    usage: 'memory-agents credits add --org ORG_ID --amount DECIMAL [--json]   (a grant, e.g. 25.5)',
    options: ['org', 'amount'],
    parse: orgAndAmount,
    run: async (service, input) => {
      const added = await service.admin.addCredits(input);
      return { ...billingRow(added), entry_id: added.entryId };
    },
  }),
  'billing.show': admin({
    usage: 'memory-agents billing show --org ORG_ID [--json]',
    options: ['org'],
    parse: org,
    run: async (service, input) => billingRow(await service.admin.getBilling(input)),
  }),
  'billing.enable': billingSwitch(true),
  'billing.disable': billingSwitch(false),
  'billing.threshold': admin({
    usage: 'memory-agents billing threshold --org ORG_ID --amount DECIMAL [--json]',
    options: ['org', 'amount'],
    parse: orgAndAmount,
    run: async (service, { organizationId, amount }) => billingRow(await service.admin.configureBilling({ organizationId, lowCreditThreshold: amount })),
  }),
};

export type AdminCommand = keyof typeof ADMIN_COMMANDS;

export function isAdminCommand(name: unknown): name is AdminCommand {
  return typeof name === 'string' && Object.hasOwn(ADMIN_COMMANDS, name);
}

/**
 * Runs an admin command on the service from its CLI flags (`{ org: 'org_...', amount: '5' }`):
 * the entry parses them (a `UsageError` when they do not fit) and runs.
 */
export async function runAdminCommand(service: MemoryService, command: AdminCommand, values: CliValues): Promise<unknown> {
  return runEntry(ADMIN_COMMANDS[command], service, command.replace('.', ' '), values);
}

function runEntry<Args>(spec: AdminCommandSpec<Args>, service: MemoryService, name: string, values: CliValues): Promise<unknown> {
  return spec.run(service, spec.parse(values, name));
}
