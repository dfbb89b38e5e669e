import { decodeTime } from 'ulid';
import type { ServiceContext } from '../service/context.js';

/**
 * Erasure reaches exports (issue 41). An export file holds every memory, turn and original of its
 * agent, so any removal of the agent's data (an erasure, a thread delete, a memory delete) removes
 * every export of that agent made before it: the files and status blobs under
 * `exports/{org}/{agent}/exp_` are deleted, and a marker (`exports/{org}/{agent}/erased.json`) keeps
 * when, so that:
 * - an export still running then (created before the marker) does not survive: once it has written
 *   its file it reads the marker and removes what it wrote ({@link exportErasedSince});
 * - reading such an export answers 404 with a sentence saying why (not a bare "not found").
 * Both sides write, then read the other's record, so at least one of them sees the other whatever
 * the interleaving; the marker holds no text, only a time.
 */

type Marker = { erased_at: string };

const markerKey = (organizationId: string, agentId: string) => `exports/${organizationId}/${agentId}/erased.json`;

/** Removes every export of the agent made up to now (files and status); called after the data is removed. */
export async function dropExports(context: ServiceContext, organizationId: string, agentId: string): Promise<void> {
  const marker: Marker = { erased_at: context.nowIso() };
  await context.blobs.put({ key: markerKey(organizationId, agentId), data: new TextEncoder().encode(JSON.stringify(marker)), mediaType: 'application/json' });
  await context.blobs.deletePrefix({ prefix: `exports/${organizationId}/${agentId}/exp_` });
}

/** When data of the agent was last removed (ms since the epoch), or null when never. */
async function lastRemoval(context: ServiceContext, organizationId: string, agentId: string): Promise<number | null> {
  const blob = await context.blobs.get({ key: markerKey(organizationId, agentId) });
  if (!blob) return null;
  const at = Date.parse((JSON.parse(new TextDecoder().decode(blob.data)) as Marker).erased_at);
  return Number.isNaN(at) ? null : at;
}

/**
 * Whether data of the agent was removed at or after `createdAt` (an ISO date-time, or an `exp_` id
 * whose time part says when it was made): an export made then may hold it.
 */
export async function exportErasedSince(context: ServiceContext, organizationId: string, agentId: string, createdAt: string): Promise<boolean> {
  const at = await lastRemoval(context, organizationId, agentId);
  if (at === null) return false;
  const made = createdAt.startsWith('exp_') ? safeDecodeTime(createdAt.slice(4)) : Date.parse(createdAt);
  return made !== null && !Number.isNaN(made) && made <= at;
}

function safeDecodeTime(ulid: string): number | null {
  try {
    return decodeTime(ulid);
  } catch {
    return null;
  }
}

/**
 * The sentence a removed export answers with (404 `not_found`). `known`: its status was still
 * there (it was running); otherwise its id only says it was made before the last removal, which an
 * id never issued can say too.
 */
export const erasedExportMessage = (exportId: string, known: boolean) =>
  known
    ? `Export ${exportId} was removed: data of this agent was erased or deleted after it was made, and the file could hold it; start a new export.`
    : `Export ${exportId} was not found: exports made before data of this agent was erased or deleted are removed with their files; start a new export.`;
