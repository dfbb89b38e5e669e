import type { VectorMeta } from './vectors.js';
import { canonicalIso, type MemorySearchRequest } from '@memory-agents/core/adapter';
import { timestampOf, type IndexTables } from './schema.js';

/**
 * What a search keeps besides the agent: records valid at `asOf` (canonical ISO), or current ones
 * when null; records of `threadIds` when given.
 */
export type SearchFilter = { asOf: string | null; threadIds: readonly string[] | null; now: string | null };

export function searchFilterOf(request: Pick<MemorySearchRequest, 'asOf' | 'threadIds' | 'now'>): SearchFilter {
  return {
    asOf: request.asOf === undefined ? null : canonicalIso(request.asOf),
    threadIds: request.threadIds === undefined ? null : [...new Set(request.threadIds)],
    now: request.now === undefined ? null : canonicalIso(request.now),
  };
}

/** SQL keeping records not expired at `now` (canonical ISO, so text compares as time; issue 42). */
export function unexpiredSql(alias: string, params: unknown[], now: string): string {
  params.push(now);
  return `(${alias}expires_at IS NULL OR ${alias}expires_at > $${params.length})`;
}

/** Whether the filter is every search's default (current records of every thread): the full-text channel's fast path. */
export const isCurrentOnly = (filter: SearchFilter) => filter.asOf === null && filter.threadIds === null;

/**
 * The filter as SQL on the records table under `alias` (e.g. `r.`), its values appended to
 * `params` (so the caller's numbering continues).
 */
export function filterSql(tables: IndexTables, filter: SearchFilter, alias: string, params: unknown[]): string {
  const clauses: string[] = [];
  if (filter.asOf === null) {
    clauses.push(`${alias}valid_to IS NULL`);
  } else {
    params.push(filter.asOf);
    const at = `$${params.length}::timestamptz`;
    clauses.push(
      `(${alias}valid_from IS NULL OR ${timestampOf(tables, `${alias}valid_from`)} <= ${at})`,
      `(${alias}valid_to IS NULL OR ${timestampOf(tables, `${alias}valid_to`)} > ${at})`,
    );
  }
  if (filter.threadIds !== null) {
    params.push(filter.threadIds);
    clauses.push(`${alias}thread_id = ANY($${params.length}::text[])`);
  }
  if (filter.now !== null) clauses.push(unexpiredSql(alias, params, filter.now));
  return clauses.join(' AND ');
}

/** The filter on a cached vector's metadata (the JS vector channel). */
export function filterPredicate(filter: SearchFilter): (meta: VectorMeta) => boolean {
  const asOf = filter.asOf === null ? null : Date.parse(filter.asOf);
  const threads = filter.threadIds === null ? null : new Set(filter.threadIds);
  const now = filter.now;
  return (meta) => {
    if (threads && !threads.has(meta.threadId)) return false;
    if (now !== null && meta.expiresAt !== null && !(meta.expiresAt > now)) return false;
    if (asOf === null) return meta.validTo === null;
    if (meta.validFrom !== null && !(Date.parse(meta.validFrom) <= asOf)) return false;
    if (meta.validTo !== null && !(Date.parse(meta.validTo) > asOf)) return false;
    return true;
  };
}

