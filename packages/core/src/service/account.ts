import { describeSession } from '../auth/session.js';
import { listLogs } from '../agents/logs.js';
import type { MemoryService } from '../memory-service.js';
import { actAs, authenticate } from './authenticate.js';
import type { ServiceContext } from './context.js';

/** The members of `MemoryService` about the caller and its organization rather than one agent's memory. */
export type AccountOperations = Pick<MemoryService, 'authenticate' | 'as' | 'session' | 'billing' | 'limits' | 'logs'>;

/**
 * Who calls and what its organization may do: authentication, acting as an organization in
 * process, the session, billing, request-rate windows and the agents' activity logs.
 */
export function createAccount(context: ServiceContext): AccountOperations {
  return {
    authenticate: (request) => authenticate(context, request),
    as: (organizationId, options) => actAs(context, organizationId, options),
    session: async ({ caller }) => describeSession(caller),
    billing: (request) => context.credits.billing(request),
    limits: {
      take: ({ caller, operation }) => context.limiter.take(caller, operation),
      now: () => context.clock.now(),
    },
    logs: (request) => listLogs(context, request),
  };
}
