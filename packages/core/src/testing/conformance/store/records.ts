import type { AgentRecord, StoreAreas, JobDetails, JobFields, NewJobRecord, KeyRecord, OrganizationRecord, ThreadRecord, TurnRecord } from '../../../ports/store/index.js';
import { iso, T0 } from './harness.js';

let counter = 0;
const ulidish = () => String(++counter).padStart(26, '0');

export function organization(overrides: Partial<OrganizationRecord> = {}): OrganizationRecord {
  return { id: `org_${ulidish()}`, name: 'Acme', limits: {}, createdAt: iso(T0), ...overrides };
}

export function key(organizationId: string, overrides: Partial<KeyRecord> = {}): KeyRecord {
  const n = ulidish();
  return {
    keyId: `k${n.slice(-20).padStart(20, '0')}`,
    organizationId,
    secretHash: 'ab'.repeat(32),
    createdAt: iso(T0),
    expiresAt: iso(T0 + 365 * 86_400_000),
    revokedAt: null,
    ...overrides,
  };
}

export function agent(organizationId: string, overrides: Partial<AgentRecord> = {}): AgentRecord {
  return {
    id: `agent_${ulidish()}`,
    organizationId,
    status: 'ready',
    config: { role: 'assistant', objective: 'remember things', metadata: { team: 'a' } },
    visibility: 'external',
    resumedFromTurn: 0,
    restoreFrom: null,
    createdAt: iso(T0),
    updatedAt: iso(T0),
    ...overrides,
  };
}

export function thread(agentRecord: AgentRecord, overrides: Partial<ThreadRecord> = {}): ThreadRecord {
  return {
    id: `thread_${ulidish()}`,
    agentId: agentRecord.id,
    organizationId: agentRecord.organizationId,
    endUserId: null,
    status: 'ready',
    title: 'Untitled',
    metadata: {},
    createdAt: iso(T0),
    updatedAt: iso(T0),
    ...overrides,
  };
}

/** A new observe job (or, with `kind` and `details` in `overrides`, one of that kind). */
export function job(
  threadRecord: ThreadRecord,
  overrides: Partial<Omit<JobFields, 'seq'>> & (JobDetails | { kind?: undefined; details?: undefined }) = {},
): NewJobRecord {
  const { kind, details, ...fields } = overrides;
  const kindAndDetails: JobDetails = kind === undefined ? { kind: 'observe', details: {} } : ({ kind, details } as JobDetails);
  return {
    id: `obs_${ulidish()}`,
    organizationId: threadRecord.organizationId,
    agentId: threadRecord.agentId,
    threadId: threadRecord.id,
    endUserId: null,
    requestId: 'req_1',
    status: 'queued',
    turnsTotal: 3,
    turnsProcessed: 0,
    error: null,
    queued: false,
    resumedAt: null,
    learning: null,
    createdAt: iso(T0),
    updatedAt: iso(T0),
    ...fields,
    ...kindAndDetails,
  };
}

export function turns(jobId: string, count: number): TurnRecord[] {
  return Array.from({ length: count }, (_, turnIndex) => ({
    jobId,
    turnIndex,
    speaker: turnIndex % 2 ? 'agent' : 'user',
    text: `turn ${turnIndex} text`,
    timestamp: iso(T0 + turnIndex),
    tags: turnIndex === 0 ? ['first'] : [],
    state: 'pending',
    failureReason: null,
    details: turnIndex === 0 ? { sourceId: `src_${'b'.repeat(32)}`, filename: 'paper.pdf', page: 1, pageEnd: 2, piece: 0 } : {},
  }));
}

/** An organization with one agent and one thread, inserted. */
export async function world(store: StoreAreas) {
  const org = organization();
  await store.organizations.insert({ organization: org });
  const a = agent(org.id);
  await store.agents.insert({ agent: a, maxLive: 10 });
  const t = thread(a);
  await store.threads.insert({ thread: t });
  return { org, agent: a, thread: t };
}

export function logEntry(organizationId: string, agentId: string, threadId: string) {
  return {
    organizationId,
    agentId,
    threadId,
    userId: organizationId,
    actorEmail: '',
    actorDisplayName: 'partner key',
    direction: 'user',
    route: 'chat',
    requestId: 'req_1',
    createdAt: iso(T0),
  };
}

export function learningRecord(organizationId: string, agentId: string, threadId: string, jobId: string, refundedCredits: string | null = null) {
  return {
    organizationId,
    agentId,
    threadId,
    jobId,
    requestId: 'req_1',
    ranges: [{ first: 2, last: 3 }],
    reason: 'generation_failed' as const,
    message: 'Writing the memory failed.',
    refundedCredits,
    createdAt: iso(T0),
  };
}
