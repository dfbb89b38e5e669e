import type { Caller } from '../auth/caller.js';
import { findAgent } from '../agents/lookup.js';
import { ServiceError } from '../errors/index.js';
import type { ServiceContext } from '../service/context.js';
import type { AgentRequest } from '../service/requests.js';
import { getBlobChunks, putBlobChunks } from '../blobs/chunks.js';
import { exportAgent } from './agent-export.js';
import { erasedExportMessage, exportErasedSince } from './erased-exports.js';

/** `POST /v1/agents/{agent_id}/exports` and its status (snake_case, as the wire has it). */
export type ExportJobOutput = {
  export_id: string;
  agent_id: string;
  status: 'running' | 'ready' | 'failed';
  vectors: boolean;
  created_at: string;
  finished_at: string | null;
  /** Size of the file once ready. */
  bytes: number | null;
  lines: number | null;
  error: string | null;
};

export type ExportJobRequest = AgentRequest & { exportId: string };
/** An export's file: its bytes as chunks read as they are consumed, its size, type and a file name. */
export type ExportDownload = { chunks: AsyncIterable<Uint8Array>; bytes: number; mediaType: string; filename: string };
export type CreateExportRequest = AgentRequest & { body?: { vectors?: boolean } | undefined };

const EXPORT_ID = /^exp_[0-9A-HJKMNP-TV-Z]{26}$/;
/** How often a running export says it is alive (its status blob's `heartbeat_at`). */
export const EXPORT_HEARTBEAT_MS = 5_000;
/**
 * A running export whose heartbeat is older than this was cut off (its process stopped or died): it
 * reads as `failed`, with a sentence saying to start a new one. Jobs are not resumed: an export is
 * quick to start again and holds no state worth keeping.
 */
export const EXPORT_STALE_MS = 60_000;

/** Export lines as UTF-8, joined into pieces of about {@link EXPORT_PIECE_BYTES}, counted in `counted.lines`. */
async function* encodedLines(lines: AsyncIterable<string>, counted: { lines: number }): AsyncIterable<Uint8Array> {
  let pending: string[] = [];
  let size = 0;
  for await (const line of lines) {
    pending.push(line);
    size += line.length;
    counted.lines++;
    if (size >= EXPORT_PIECE_BYTES) {
      yield Buffer.from(pending.join(''), 'utf8');
      pending = [];
      size = 0;
    }
  }
  if (pending.length > 0) yield Buffer.from(pending.join(''), 'utf8');
}

/** About how many characters of export lines are written to the blob store at a time. */
const EXPORT_PIECE_BYTES = 64 * 1024;

/** What the status blob holds: the wire's fields and when the writer last said it was alive. */
type StoredJob = ExportJobOutput & { heartbeat_at?: string };
// Kept in the blob store (shared by every process of a deployment), under the organization and agent.
const statusKey = (organizationId: string, agentId: string, exportId: string) => `exports/${organizationId}/${agentId}/${exportId}.json`;
const fileKey = (organizationId: string, agentId: string, exportId: string) => `exports/${organizationId}/${agentId}/${exportId}.jsonl`;

/**
 * Asynchronous export jobs of an organization's own agents (issue 34): `create` answers 202 with an
 * `exp_` id and writes the export in the background into the blob store; `get` reads its status and
 * `download` the JSON lines once ready. The whole agent is exported (every thread), so a call with
 * `X-SP-End-User` (one person's view) is 403 `forbidden`. Ids of another organization or agent are 404.
 * The file is written to the blob store as it is made (`BlobStore.putStream`), in pieces of about
 * 64 KiB, so a large agent is never held whole (issue 41: a 50k-memory export took the server from
 * 192 to 759 MB); a store without `putStream` gets it whole.
 */
export function createExportJobs(context: ServiceContext) {
  const write = (organizationId: string, agentId: string, job: StoredJob) =>
    context.blobs.put({ key: statusKey(organizationId, agentId, job.export_id), data: new TextEncoder().encode(JSON.stringify(job)), mediaType: 'application/json' });
  const owner = async (caller: Caller, agentId: string) => {
    if (caller.endUserId !== null) throw new ServiceError('forbidden', 'An export holds every thread of the agent; call without X-SP-End-User.');
    return findAgent(context, caller, agentId);
  };
  const read = async ({ caller, agentId, exportId }: ExportJobRequest): Promise<ExportJobOutput> => {
    await owner(caller, agentId);
    const blob = EXPORT_ID.test(exportId) ? await context.blobs.get({ key: statusKey(caller.organizationId, agentId, exportId) }) : null;
    // An erasure since it was made removed it (a running one's heartbeat may have written its status again).
    if (EXPORT_ID.test(exportId) && (await exportErasedSince(context, caller.organizationId, agentId, exportId))) {
      throw new ServiceError('not_found', erasedExportMessage(exportId, blob !== null));
    }
    if (!blob) throw new ServiceError('not_found', `Export ${exportId} was not found.`);
    const { heartbeat_at: heartbeat, ...job } = JSON.parse(new TextDecoder().decode(blob.data)) as StoredJob;
    const alive = Date.parse(heartbeat ?? job.created_at);
    if (job.status === 'running' && context.clock.now() - alive > EXPORT_STALE_MS) {
      return { ...job, status: 'failed', finished_at: new Date(alive).toISOString(), error: 'The export was cut off (the server writing it stopped); start a new export.' };
    }
    return job;
  };
  return {
    exports: {
      async create({ caller, agentId, body }: CreateExportRequest): Promise<ExportJobOutput> {
        const agent = await owner(caller, agentId);
        if (body !== undefined && (typeof body !== 'object' || body === null || (body.vectors !== undefined && typeof body.vectors !== 'boolean'))) {
          throw new ServiceError('invalid_request', 'The body is optional: { "vectors": true | false }.', { status: 422 });
        }
        const vectors = body?.vectors ?? true;
        const job: ExportJobOutput = {
          export_id: context.ids('exp_'),
          agent_id: agent.id,
          status: 'running',
          vectors,
          created_at: context.nowIso(),
          finished_at: null,
          bytes: null,
          lines: null,
          error: null,
        };
        const organizationId = caller.organizationId;
        await write(organizationId, agent.id, { ...job, heartbeat_at: job.created_at });
        context.background.run('export', { agentId: agent.id, exportId: job.export_id }, async () => {
          // Says it is alive while it runs, so a reader can tell a running export from one cut off.
          let beat: Promise<unknown> = Promise.resolve();
          const heartbeat = setInterval(() => {
            beat = write(organizationId, agent.id, { ...job, heartbeat_at: context.nowIso() }).catch(() => undefined);
          }, EXPORT_HEARTBEAT_MS);
          heartbeat.unref?.();
          const settle = async (final: ExportJobOutput) => {
            clearInterval(heartbeat);
            await beat;
            await write(organizationId, agent.id, final);
          };
          try {
            const counted = { lines: 0 };
            const { bytes } = await putBlobChunks(context.blobs, {
              key: fileKey(organizationId, agent.id, job.export_id),
              chunks: encodedLines(exportAgent(context, { organizationId, agentId: agent.id, vectors }), counted),
              mediaType: 'application/x-ndjson',
            });
            await settle({ ...job, status: 'ready', finished_at: context.nowIso(), bytes, lines: counted.lines });
          } catch (error) {
            await settle({ ...job, status: 'failed', finished_at: context.nowIso(), error: error instanceof Error ? error.message : String(error) });
          }
          // Written first, then checked: an erasure that ran meanwhile either saw this file or is seen here.
          if (await exportErasedSince(context, organizationId, agent.id, job.created_at)) {
            await context.blobs.delete({ key: fileKey(organizationId, agent.id, job.export_id) });
            await context.blobs.delete({ key: statusKey(organizationId, agent.id, job.export_id) });
          }
        });
        return job;
      },
      get: read,
      /**
       * The file of a ready export, as chunks read from the blob store as they are consumed (a
       * large export is never held whole: issue 41), with its size.
       */
      async download(request: ExportJobRequest): Promise<ExportDownload> {
        const job = await read(request);
        if (job.status !== 'ready') throw new ServiceError('conflict', job.status === 'failed' ? `Export ${job.export_id} failed: ${job.error}` : `Export ${job.export_id} is still running; poll its status until it is ready.`);
        const blob = await getBlobChunks(context.blobs, { key: fileKey(request.caller.organizationId, request.agentId, request.exportId) });
        if (!blob) throw new ServiceError('not_found', `The file of export ${job.export_id} is gone.`);
        return { chunks: blob.chunks, bytes: blob.bytes, mediaType: 'application/x-ndjson', filename: `${job.agent_id}-${job.export_id}.jsonl` };
      },
    },
  };
}
