import { isServiceError } from '../errors/index.js';
import type { AgentRecord, MaintenanceKind, MaintenanceRunRecord } from '../ports/store/index.js';
import type { ServiceContext } from '../service/context.js';
import { describeError } from '../service/logger.js';

/** `createdBy` of a run the idle schedule planned (a person's runs carry their key id). */
export const SCHEDULE_ACTOR = 'schedule';

const DAY_MS = 86_400_000;
/** The kinds a schedule may run: never `reapply_policy` (a new policy reaches old memories only when a person applies it, issue 44). */
const SCHEDULED_KINDS: readonly MaintenanceKind[] = ['merge_duplicates', 'supersede_history', 'sweep_expired'];

/**
 * Maintenance on a schedule when an agent is idle (issue 43), `createMemoryService({ maintenance:
 * { schedule } })`, `serve --maintenance-idle-minutes N`. Off unless given: a run changes what an
 * agent recalls, so the operator opts in (docs/decisions.md).
 */
export type MaintenanceScheduleOptions = {
  /** An agent is idle when none of its jobs is unfinished and none changed for this many minutes (> 0). */
  idleMinutes: number;
  /** The kinds run, in this order. @default ['merge_duplicates', 'supersede_history', 'sweep_expired'] */
  kinds?: MaintenanceKind[];
  /** Scheduled runs per agent in any 24 hours (each kind is a run; >= 1). @default 3 */
  maxRunsPerDay?: number;
  /** Changes one scheduled run makes at most (the first of its diff; >= 1). @default 100 */
  maxMemoriesPerRun?: number;
  /** The guard's share for scheduled runs, at most the service's `maxShare`. @default 0.25 */
  maxShare?: number;
  /** How often idle agents are looked for (ms, >= 1000). @default 300000 */
  intervalMs?: number;
};

export type ResolvedSchedule = Required<MaintenanceScheduleOptions>;

/** The options with their defaults; a value out of range throws a TypeError (at `createMemoryService`). */
export function resolveSchedule(options: MaintenanceScheduleOptions, serviceMaxShare: number): ResolvedSchedule {
  const whole = (name: string, value: number, min: number) => {
    if (!Number.isInteger(value) || value < min) throw new TypeError(`maintenance.schedule.${name} must be an integer >= ${min}, got ${String(value)}`);
    return value;
  };
  if (!(typeof options.idleMinutes === 'number' && options.idleMinutes > 0 && Number.isFinite(options.idleMinutes))) {
    throw new TypeError(`maintenance.schedule.idleMinutes must be a number above 0, got ${String(options.idleMinutes)}`);
  }
  const kinds = options.kinds ?? [...SCHEDULED_KINDS];
  const unknown = kinds.find((kind) => !SCHEDULED_KINDS.includes(kind));
  if (kinds.length === 0 || unknown !== undefined) throw new TypeError(`maintenance.schedule.kinds must name some of ${SCHEDULED_KINDS.join(', ')}, got ${String(unknown ?? 'none')}`);
  const maxShare = options.maxShare ?? Math.min(0.25, serviceMaxShare);
  if (!(maxShare > 0 && maxShare <= serviceMaxShare)) throw new TypeError(`maintenance.schedule.maxShare must be above 0 and at most maintenance.maxShare (${serviceMaxShare}), got ${String(maxShare)}`);
  return {
    idleMinutes: options.idleMinutes,
    kinds: [...new Set(kinds)],
    maxRunsPerDay: whole('maxRunsPerDay', options.maxRunsPerDay ?? 3, 1),
    maxMemoriesPerRun: whole('maxMemoriesPerRun', options.maxMemoriesPerRun ?? 100, 1),
    maxShare,
    intervalMs: whole('intervalMs', options.intervalMs ?? 300_000, 1000),
  };
}

type Runs = {
  createRun(agent: AgentRecord, kind: MaintenanceKind, maxShare: number, createdBy: string, maxChanges?: number): Promise<MaintenanceRunRecord>;
  applyRun(agent: AgentRecord, run: MaintenanceRunRecord): Promise<MaintenanceRunRecord>;
};

/** What one pass of the schedule did: runs planned, applied, and left as dry runs (the run's `error` says why). */
export type SchedulePass = { planned: number; applied: number; refused: number };

/**
 * One pass over the ready agents: for each idle one, each allowed kind not run by the schedule
 * since the agent last learned (`sweep_expired`: not in the last 24 hours), within the day's
 * runs, is planned (at most `maxMemoriesPerRun` changes) and applied only if the guard, the
 * re-check and the credits allow; otherwise it stays a dry run whose `error` says why, for a
 * person to review. Every run is listed like a person's (`created_by` "schedule").
 */
export async function maintainIdleAgents(context: ServiceContext, runs: Runs, schedule: ResolvedSchedule): Promise<SchedulePass> {
  const pass: SchedulePass = { planned: 0, applied: 0, refused: 0 };
  const busy = new Set(await context.store.jobs.agentsWithUnfinishedJobs());
  const now = context.clock.now();
  for (const agent of await context.store.agents.listByStatus({ statuses: ['ready'] })) {
    if (busy.has(agent.id)) continue;
    const learned = await lastLearning(context, agent.id);
    if (learned === null || now - learned < schedule.idleMinutes * 60_000) continue;
    const recent = (await context.store.maintenanceRuns.list({ agentId: agent.id, limit: 100 })).filter((run) => run.createdBy === SCHEDULE_ACTOR);
    let today = recent.filter((run) => now - Date.parse(run.createdAt) < DAY_MS).length;
    for (const kind of schedule.kinds) {
      if (today >= schedule.maxRunsPerDay) break;
      const last = recent.find((run) => run.kind === kind);
      // Planned after the agent last learned (strictly: a tie runs again), or a sweep in the last day: nothing new to tidy.
      if (last && Date.parse(last.createdAt) > (kind === 'sweep_expired' ? now - DAY_MS : learned)) continue;
      try {
        await context.credits.requireFunds(agent.organizationId, 0);
      } catch (error) {
        if (isServiceError(error) && error.code === 'payment_required') break;
        throw error;
      }
      const run = await runs.createRun(agent, kind, schedule.maxShare, SCHEDULE_ACTOR, schedule.maxMemoriesPerRun);
      pass.planned++;
      today++;
      try {
        await runs.applyRun(agent, run);
        pass.applied++;
      } catch (error) {
        if (!isServiceError(error) || (error.code !== 'conflict' && error.code !== 'payment_required')) throw error;
        pass.refused++;
        await context.store.maintenanceRuns.update({ runId: run.id, patch: { error: `Not applied by the schedule: ${error.message}` }, updatedAt: context.nowIso() });
      }
    }
  }
  return pass;
}

/** When the agent last learned (its newest job's last change, ms), null when it never did. */
async function lastLearning(context: ServiceContext, agentId: string): Promise<number | null> {
  let newest: number | null = null;
  for (const thread of await context.store.threads.list({ agentId })) {
    const [job] = await context.store.jobs.listForThread({ threadId: thread.id, limit: 1 });
    const at = job ? Date.parse(job.updatedAt) : Number.NaN;
    if (!Number.isNaN(at) && (newest === null || at > newest)) newest = at;
  }
  return newest;
}

/** One pass of the schedule at a time; failures are logged, the next tick tries again. */
export function scheduledPasses(context: ServiceContext, run: () => Promise<SchedulePass>) {
  let running: Promise<unknown> = Promise.resolve();
  return {
    tick(): Promise<SchedulePass> {
      const next = running.then(run);
      running = next.catch((error: unknown) => context.logger.warn('scheduled maintenance failed; the next pass tries again', { error: describeError(error) }));
      return next;
    },
    settled: () => running,
  };
}
