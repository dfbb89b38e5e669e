import { randomUUID } from 'node:crypto';
import { ServiceError } from '../errors/index.js';
import type { AgentRecord } from '../ports/store/index.js';
import { checkFile, type Checked } from './check-file.js';
import { ExportFormatError, type ExportRecordType } from './format.js';
import { importLines, type ImportLine } from './import-lines.js';
import { createRekey } from './import-rekey.js';
import type { ServiceContext } from '../service/context.js';

/** What `importAgent` writes through. */
export type ImportContext = Pick<ServiceContext, 'store' | 'index' | 'blobs' | 'embedder' | 'ids' | 'defaultLimits' | 'logger' | 'nowIso' | 'instanceId' | 'clock'>;

/**
 * The lease an import holds while it writes agent `agentId` (status `importing`): an `importing`
 * agent whose lease nobody holds any more is left from a killed import (`abandonedImports`).
 */
export const importLeaseName = (agentId: string) => `agent-import:${agentId}`;
/** How long an import's lease lasts without renewal; it is renewed every third of that. */
export const IMPORT_LEASE_MS = 60_000;
/**
 * The holder of an import that keeps ids (`memory-agents migrate`): the same in every run, so a run
 * after an interrupted one (the same agent id again) takes the lease over at once.
 */
const KEEPING_IDS_HOLDER = 'import:keeping-ids';

/**
 * Agents left `importing` by an import that no longer runs: its lease is gone or lapsed, or (on a
 * store only one process opens) it was held by an earlier process. Removed by a start
 * (`agents.resume`) and by the next import into the same organization.
 */
export async function abandonedImports(context: Pick<ServiceContext, 'store' | 'clock' | 'instanceId'>, organizationId?: string): Promise<AgentRecord[]> {
  const abandoned: AgentRecord[] = [];
  for (const agent of await context.store.agents.listByStatus({ statuses: ['importing'] })) {
    if (organizationId !== undefined && agent.organizationId !== organizationId) continue;
    const lease = await context.store.leases.get({ name: importLeaseName(agent.id) });
    const running =
      lease !== null &&
      lease.expiresAt > context.clock.now() &&
      (context.store.capabilities.shared || lease.holder.startsWith(`${context.instanceId}:`) || lease.holder === KEEPING_IDS_HOLDER);
    if (!running) abandoned.push(agent);
  }
  return abandoned;
}

/** How far an import has come: the agent it writes (hidden until done), memories written of the file's. */
export type ImportProgress = { agentId: string; memories: number; totalMemories: number };

export type ImportAgentOptions = {
  /** The organization the agent is imported into (any: ids are re-keyed). */
  organizationId: string;
  /**
   * Opens the file's lines (without line ends). Called twice: once to check the whole file, once
   * to write it, so nothing is written from a file that turns out bad.
   */
  open: () => AsyncIterable<string>;
  /**
   * Keep the file's ids (agent, threads, jobs, memories) instead of re-keying: only into the
   * organization the file came from, and only where they do not exist yet (moving a whole store,
   * `memory-agents migrate`). @default false
   */
  keepIds?: boolean;
  /** Store the file's vectors with the file's embedder fingerprint, never re-embedding. @default false */
  keepVectors?: boolean;
  /** Called after each batch of memories is written (the CLI prints it for a long import). */
  onProgress?: (progress: ImportProgress) => void;
};

export type ImportAgentResult = {
  agentId: string;
  organizationId: string;
  /** The exported agent's id. */
  fromAgentId: string;
  counts: Record<ExportRecordType, number>;
  /** True when memories were embedded again (no vectors in the file, or another embedder). */
  reembedded: boolean;
  /** Ledger entries in the file, not applied: billing belongs to the target organization. */
  ledgerEntriesSkipped: number;
  /** Old id -> new id of the threads, observation jobs and stored sources (memories are left out). */
  ids: { threads: Record<string, string>; observations: Record<string, string>; sources: Record<string, string> };
};

/**
 * Imports an export file into `organizationId` as a NEW agent: every agent, thread, job and memory
 * id is re-keyed (always, so an import never collides, also into the organization it came from);
 * `src_` ids are content ids of the organization, so they are computed again for the target
 * organization. Memories are embedded again when the file has no vectors or they were made by
 * another embedder than this service's. Each job's learning records (`job_learning`: merges,
 * supersessions, model tokens) are recorded again with re-keyed ids, so its receipt says what the
 * original's did. Ledger entries are not applied (the target organization's billing is its own);
 * they are counted in the result.
 *
 * Nothing is half-imported: the whole file is checked first (`invalid_request` 422 naming the
 * line, nothing written); the agent is written `importing` (hidden: not listed, 404, not exported)
 * and takes its status only after its last line, so a process killed part-way leaves no agent
 * anyone sees, and the next start removes it (on a shared store, once the import's lease
 * `importLeaseName` has lapsed). When writing fails part-way, everything written (the new agent with
 * its threads, jobs and uploads, its memories, blobs this import added) is deleted before the error
 * is rethrown.
 */
export async function importAgent(context: ImportContext, { organizationId, open, keepIds = false, keepVectors = false, onProgress }: ImportAgentOptions): Promise<ImportAgentResult> {
  const organization = await context.store.organizations.get({ id: organizationId });
  if (!organization) throw new ServiceError('not_found', `No organization ${organizationId}.`);
  let checked: Checked;
  try {
    checked = await checkFile(open(), organizationId);
  } catch (error) {
    if (error instanceof ExportFormatError) throw new ServiceError('invalid_request', `The export file was refused at ${error.message}`, { status: 422, cause: error });
    throw error;
  }
  const { header } = checked;
  if (keepIds && header.organizationId !== organizationId) {
    throw new ServiceError('invalid_request', `Keeping ids needs the organization the file came from (${header.organizationId}), not ${organizationId}.`, { status: 422 });
  }
  const keep = keepVectors && header.vectors && header.embedder !== null;
  const embedder = keep ? header.embedder! : { id: context.embedder.id, dimensions: context.embedder.dimensions };
  const reembed = !keep && (!header.vectors || header.embedder === null || header.embedder.id !== embedder.id || header.embedder.dimensions !== embedder.dimensions);
  const agentId = keepIds ? header.agentId : context.ids('agent_');
  const rekey = createRekey({ keepIds, ids: context.ids, checked });
  // What a killed import left in this organization goes first (it holds a place in the quota).
  for (const left of await abandonedImports(context, organizationId)) {
    context.logger.warn('import: removing an agent a stopped import left half-written', { agentId: left.id });
    await context.index.deleteBy({ agentId: left.id });
    await context.store.agents.delete({ organizationId, agentId: left.id });
  }
  // A lease says the import is alive (renewed while it writes): see `abandonedImports`.
  const holder = keepIds ? KEEPING_IDS_HOLDER : `${context.instanceId}:import:${randomUUID()}`;
  const lease = { name: importLeaseName(agentId), holder, ttlMs: IMPORT_LEASE_MS };
  if (!(await context.store.leases.acquire({ ...lease, now: context.clock.now() }))) {
    throw new ServiceError(
      'conflict',
      `Agent ${agentId} is being imported by another process (or was, by one stopped less than ${IMPORT_LEASE_MS / 1000} s ago); run the import again once that one has ended.`,
    );
  }
  let leaseLost = false;
  const leaseLostError = () =>
    new ServiceError('service_unavailable', `The import of agent ${agentId} lost its lease (not renewed within ${IMPORT_LEASE_MS / 1000} s, as when the database does not answer), so another process may have removed it as abandoned; what it wrote was removed. Run the import again.`);
  const renewal = setInterval(() => {
    context.store.leases.renew({ ...lease, now: context.clock.now() }).then(
      (held) => void (leaseLost ||= !held),
      () => undefined,
    );
  }, IMPORT_LEASE_MS / 3);
  renewal.unref?.();
  const lines = importLines(context, { organization, agentId, rekey, reembed, embedder, totalMemories: checked.counts.memory, ...(onProgress ? { onProgress } : {}) });
  try {
    let number = 0;
    for await (const text of open()) {
      number++;
      if (number === 1) continue;
      if (leaseLost) throw leaseLostError();
      await lines.write(JSON.parse(text) as ImportLine);
    }
    await lines.finish();
    if (leaseLost) throw leaseLostError();
    // Every line is written: the agent appears (unless another process removed it as abandoned).
    if (lines.agentInserted() && !(await context.store.agents.update({ organizationId, agentId, patch: { status: lines.finalStatus() }, updatedAt: context.nowIso() }))) throw leaseLostError();
  } catch (error) {
    // Undo: the new agent (its threads, messages, jobs, turns, reports and uploads go with it), its
    // memories and the blobs this import added.
    const undo = async (what: string, fn: () => Promise<unknown>) =>
      fn().catch((cause: unknown) => context.logger.error(`import: undoing ${what} failed: ${String(cause)}`));
    await undo('the memories', () => context.index.deleteBy({ agentId }));
    if (lines.agentInserted()) await undo('the agent', () => context.store.agents.delete({ organizationId, agentId }));
    for (const key of lines.addedBlobs()) await undo(`blob ${key}`, () => context.blobs.delete({ key }));
    throw error;
  } finally {
    clearInterval(renewal);
    await context.store.leases.release(lease).catch(() => undefined);
  }
  return {
    agentId,
    organizationId,
    fromAgentId: header.agentId,
    counts: checked.counts,
    reembedded: reembed,
    ledgerEntriesSkipped: checked.counts.ledger,
    ids: { threads: Object.fromEntries(rekey.maps.thread_), observations: Object.fromEntries(rekey.maps.obs_), sources: Object.fromEntries(checked.sourceIds) },
  };
}
