import type { Caller } from '../auth/caller.js';
import { findAgent } from '../agents/lookup.js';
import { ServiceError } from '../errors/index.js';
import { createIdempotency, requestFingerprint } from '../idempotency/idempotency.js';
import { ID_PATTERNS } from '../ids/index.js';
import type { AgentRecord, MaintenanceKind, MaintenanceRunRecord } from '../ports/store/index.js';
import { maintenanceListQuery, maintenancePlanBody, type MaintenancePlanInput, type MaintenanceRunListOutput, type MaintenanceRunOutput } from '../schemas/maintenance.js';
import type { ServiceContext } from '../service/context.js';
import { describeError } from '../service/logger.js';
import type { AgentRequest } from '../service/requests.js';
import { parseBody, parseQuery } from '../validation/parse.js';
import { applyChanges, guardOf, presentRun, readStates, undoChanges, wordsOf } from './run.js';
import { countCurrent, planChanges } from './plan.js';
import { checkPolicyVersion, planRepolicy } from './repolicy.js';

/** The guard's default: an application may take at most this share of an agent's current memories away. */
export const DEFAULT_MAINTENANCE_SHARE = 0.25;
/** The service-level maximum a request's `max_share` may ask for, unless the operator sets another. */
export const DEFAULT_MAINTENANCE_MAX_SHARE = 0.5;

export type MaintenancePlanRequest = AgentRequest & { body: MaintenancePlanInput; idempotencyKey?: string };
export type MaintenanceRunRequest = AgentRequest & { runId: string; idempotencyKey?: string };
export type MaintenanceListRequest = AgentRequest & { query?: { limit?: string | number; cursor?: string } };


/** Who did it, as marks and runs record it. */
export const actor = (caller: Caller) => (caller.endUserId === null ? caller.keyId : `${caller.keyId} for ${caller.endUserId}`);

/**
 * Maintenance runs of an agent (an extension, issue 43): a dry run's diff (`plan`), applied exactly
 * (`apply`, re-checking every memory), undone within the restore window (`undo`). Applying and
 * undoing record their intent (the run's status) before the index changes; `resume` replays what a
 * stopped process left. Organization-level: `X-SP-End-User` is 403.
 */
export function createMaintenance(context: ServiceContext, options: { maxShare: number }) {
  const idempotency = createIdempotency(context);

  async function findRun(caller: Caller, agentId: string, runId: string) {
    const agent = await findAgent(context, caller, agentId);
    if (caller.endUserId !== null) throw new ServiceError('forbidden', 'Maintenance changes every thread of the agent; call without X-SP-End-User.');
    const run = ID_PATTERNS.maintenanceRun.test(runId) ? await context.store.maintenanceRuns.get({ agentId: agent.id, runId }) : null;
    if (!run || run.organizationId !== caller.organizationId) throw new ServiceError('not_found', `Maintenance run ${runId} was not found.`);
    return { agent, run };
  }

  /** Applies or undoes `run` (already marked `applying` / `undoing`) to its end; a failure marks it failed. */
  async function finish(run: MaintenanceRunRecord): Promise<MaintenanceRunRecord> {
    try {
      if (run.status === 'undoing') {
        await undoChanges(context, run);
        return (await context.store.maintenanceRuns.update({ runId: run.id, patch: { status: 'undone', done: run.changes.length, undoneAt: context.nowIso() }, updatedAt: context.nowIso() }))!;
      }
      await applyChanges(context, run, async (done) => {
        await context.store.maintenanceRuns.update({ runId: run.id, patch: { done }, updatedAt: context.nowIso() });
      });
      const appliedAt = context.nowIso();
      const undoUntil = new Date(Date.parse(appliedAt) + context.lifecycle.restoreWindowMs).toISOString();
      return (await context.store.maintenanceRuns.update({ runId: run.id, patch: { status: 'applied', done: run.changes.length, appliedAt, undoUntil }, updatedAt: appliedAt }))!;
    } catch (error) {
      context.logger.error('maintenance run failed', { runId: run.id, error: describeError(error) });
      await context.store.maintenanceRuns.update({ runId: run.id, patch: { status: 'failed', error: 'The run stopped with an internal error; what it applied stays applied and can be undone.' }, updatedAt: context.nowIso() });
      throw error;
    }
  }

  /** Plans a dry run of `kind` and stores it (a person's request or the idle schedule, `createdBy`). */
  async function createRun(agent: AgentRecord, kind: MaintenanceKind, maxShare: number, createdBy: string, maxChanges?: number): Promise<MaintenanceRunRecord> {
    const planned = kind === 'reapply_policy' ? await planRepolicy(context, agent) : await planChanges(context, agent, kind);
    const now = context.nowIso();
    const run: MaintenanceRunRecord = {
      id: context.ids('mnt_'),
      organizationId: agent.organizationId,
      agentId: agent.id,
      kind,
      status: 'dry_run',
      maxShare,
      currentMemories: await countCurrent(context, agent.id),
      changes: maxChanges === undefined ? planned : planned.slice(0, maxChanges),
      done: 0,
      createdBy,
      error: null,
      createdAt: now,
      updatedAt: now,
      appliedAt: null,
      undoUntil: null,
      undoneAt: null,
    };
    await context.store.maintenanceRuns.insert({ run });
    return run;
  }

  /**
   * Applies a dry run exactly: 409 `conflict` when it is not a dry run any more, when the guard
   * refuses it or a memory changed since; 402 when the organization cannot pay for it.
   */
  async function applyRun(agent: AgentRecord, run: MaintenanceRunRecord): Promise<MaintenanceRunRecord> {
    if (run.status !== 'dry_run') throw new ServiceError('conflict', `Maintenance run ${run.id} is ${run.status}; only a dry run can be applied (plan a new one).`);
    const guard = await guardOf(context, run);
    if (!guard.allowed) throw new ServiceError('conflict', guard.reason!);
    const changed = await changedSince(run);
    if (changed.length > 0) {
      throw new ServiceError('conflict', `${changed.length} memor${changed.length === 1 ? 'y' : 'ies'} changed since the dry run (${changed.slice(0, 5).join(', ')}${changed.length > 5 ? ', ...' : ''}); plan a new run.`);
    }
    await checkPolicyVersion(context, run);
    // Charged as learning is (the words of the memories it changes), once per run; 402 changes nothing.
    await context.credits.chargeMaintenance({ organizationId: agent.organizationId, runId: run.id, words: await wordsOf(context, run) });
    // The intent: recorded before the index changes (a process that stops now resumes it on start).
    const applying = await context.store.maintenanceRuns.update({ runId: run.id, patch: { status: 'applying' }, updatedAt: context.nowIso(), ifStatus: ['dry_run'] });
    if (!applying) throw new ServiceError('conflict', `Maintenance run ${run.id} is already being applied.`);
    return finish(applying);
  }

  return {
    /** For the idle schedule (schedule.ts): a run planned and applied without a caller. */
    createRun,
    applyRun,
    maintenance: {
      /** `POST /v1/agents/{agent_id}/maintenance` (201): a dry run: the diff, nothing changed. */
      async plan({ caller, agentId, body, idempotencyKey }: MaintenancePlanRequest): Promise<MaintenanceRunOutput> {
        const input = parseBody(maintenancePlanBody, body);
        const agent = await findAgent(context, caller, agentId);
        if (caller.endUserId !== null) throw new ServiceError('forbidden', 'Maintenance changes every thread of the agent; call without X-SP-End-User.');
        const maxShare = input.max_share ?? Math.min(DEFAULT_MAINTENANCE_SHARE, options.maxShare);
        if (maxShare > options.maxShare) {
          throw new ServiceError('invalid_request', `Invalid max_share: at most ${options.maxShare} (the service's maximum), got ${maxShare}.`, { status: 422 });
        }
        // A dry run is free, but an organization out of credit is told so before, not at apply (402).
        await context.credits.requireFunds(agent.organizationId, 0);
        const fingerprint = requestFingerprint(['maintenance.plan', agent.id, input]);
        return idempotency.run<MaintenanceRunOutput>({ caller, idempotencyKey, fingerprint, what: 'maintenance request', status: 201 }, async () =>
          presentRun(context, await createRun(agent, input.kind, maxShare, actor(caller)), true),
        );
      },

      /**
       * `POST .../maintenance/{run_id}/apply`: applies exactly the dry run's diff. 409 `conflict` when
       * the run is not a dry run any more, when the guard refuses it, or when a memory changed since.
       */
      async apply({ caller, agentId, runId, idempotencyKey }: MaintenanceRunRequest): Promise<MaintenanceRunOutput> {
        const { agent, run } = await findRun(caller, agentId, runId);
        const fingerprint = requestFingerprint(['maintenance.apply', agent.id, run.id]);
        return idempotency.run<MaintenanceRunOutput>({ caller, idempotencyKey, fingerprint, what: 'maintenance request', status: 200 }, async () => {
          return presentRun(context, await applyRun(agent, run), true);
        });
      },

      /** `POST .../maintenance/{run_id}/undo`: reverses every change of an applied run within its window; else 409. */
      async undo({ caller, agentId, runId, idempotencyKey }: MaintenanceRunRequest): Promise<MaintenanceRunOutput> {
        const { agent, run } = await findRun(caller, agentId, runId);
        const fingerprint = requestFingerprint(['maintenance.undo', agent.id, run.id]);
        return idempotency.run<MaintenanceRunOutput>({ caller, idempotencyKey, fingerprint, what: 'maintenance request', status: 200 }, async () => {
          if (run.status !== 'applied' && run.status !== 'failed') throw new ServiceError('conflict', `Maintenance run ${run.id} is ${run.status}; only an applied run can be undone.`);
          if (run.status === 'failed' && run.appliedAt === null && run.done === 0) throw new ServiceError('conflict', `Maintenance run ${run.id} failed before applying anything; there is nothing to undo.`);
          if (run.undoUntil !== null && Date.parse(run.undoUntil) <= context.clock.now()) {
            throw new ServiceError('conflict', `The undo window of maintenance run ${run.id} ended at ${run.undoUntil}.`);
          }
          const undoing = await context.store.maintenanceRuns.update({ runId: run.id, patch: { status: 'undoing', done: 0 }, updatedAt: context.nowIso(), ifStatus: ['applied', 'failed'] });
          if (!undoing) throw new ServiceError('conflict', `Maintenance run ${run.id} is already being undone.`);
          return presentRun(context, await finish(undoing), true);
        });
      },

      /** `GET .../maintenance/{run_id}`: the run with its diff; 404 `not_found`. */
      async get({ caller, agentId, runId }: MaintenanceRunRequest): Promise<MaintenanceRunOutput> {
        return presentRun(context, (await findRun(caller, agentId, runId)).run, true);
      },

      /** `GET .../maintenance`: the agent's runs, newest first, without their diffs. */
      async list({ caller, agentId, query }: MaintenanceListRequest): Promise<MaintenanceRunListOutput> {
        const input = parseQuery(maintenanceListQuery, query ?? {});
        const agent = await findAgent(context, caller, agentId);
        if (caller.endUserId !== null) throw new ServiceError('forbidden', 'Maintenance changes every thread of the agent; call without X-SP-End-User.');
        const limit = input.limit ?? 20;
        const runs = await context.store.maintenanceRuns.list({ agentId: agent.id, limit: limit + 1, before: input.cursor || null });
        const page = runs.slice(0, limit);
        const presented = await Promise.all(page.map(async (run) => {
          const { changes: _changes, ...rest } = await presentRun(context, run, false);
          return rest;
        }));
        return { runs: presented, next_cursor: runs.length > limit ? page[page.length - 1]!.id : '' };
      },
    },

    /** Finishes the runs a stopped process left applying or undoing (called by `start()`). */
    async resume(): Promise<void> {
      for (const run of await context.store.maintenanceRuns.listByStatus({ statuses: ['applying', 'undoing'] })) {
        await finish(run).catch(() => undefined);
      }
    },
  };

  /** The memories of the run whose state is not what the dry run saw. */
  function changedSince(run: MaintenanceRunRecord): Promise<string[]> {
    return readStates(context, run);
  }
}
