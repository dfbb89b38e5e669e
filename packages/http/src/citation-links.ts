import type { Citation, CitationTarget, schemas } from '@memory-agents/core';
import type { SseEvent } from './route.js';

/**
 * The path the HTTP API serves a citation's target at, under the mount prefix `basePath`
 * ('' at the root): a document's stored original (`GET /v1/agents/{agent_id}/sources/{source_id}`)
 * or the status of the observation a turn came with
 * (`GET /v1/agents/{agent_id}/threads/{thread_id}/observe/{observation_id}/status`).
 * In-process users of the core API who want the same link call this with `basePath` of their mount.
 */
export function citationHref(target: CitationTarget, basePath = ''): string {
  const agent = `${basePath}/v1/agents/${target.agent_id}`;
  return target.kind === 'source' ? `${agent}/sources/${target.source_id}` : `${agent}/threads/${target.thread_id}/observe/${target.observation_id}/status`;
}

/** A citation as the spec's `Citation` (its key order is the spec's, so bodies stay byte-identical). */
export function wireCitation(citation: Citation | schemas.CitationBody, basePath: string): schemas.CitationBody {
  // A response recorded under an Idempotency-Key before citations carried a `target` already holds
  // its root path; its replay gets the prefix in front, as it always did.
  const href = 'target' in citation ? citationHref(citation.target, basePath) : citation.href.startsWith('/v1/') ? `${basePath}${citation.href}` : citation.href;
  return { source_id: citation.source_id, label: citation.label, media_type: citation.media_type, href, verified: citation.verified };
}

/** `body` with its citations as the wire has them (each with its `href` under `basePath`). */
export function withCitationLinks<T extends { citations: readonly (Citation | schemas.CitationBody)[] }>(
  body: T,
  basePath: string,
): Omit<T, 'citations'> & { citations: schemas.CitationBody[] } {
  return { ...body, citations: body.citations.map((citation) => wireCitation(citation, basePath)) };
}

/**
 * The events of a chat stream with the citations of its `context` and `done` events as the wire
 * has them; closing the result closes the source (the answer place it holds is released).
 */
export function streamWithCitationLinks(source: AsyncIterable<SseEvent & { data: object }>, basePath: string): AsyncIterable<SseEvent> {
  const link = (event: SseEvent & { data: object }): SseEvent =>
    'citations' in event.data && Array.isArray(event.data.citations) ? { ...event, data: withCitationLinks(event.data as { citations: Citation[] }, basePath) } : event;
  return {
    [Symbol.asyncIterator]() {
      const iterator = source[Symbol.asyncIterator]();
      return {
        async next() {
          const next = await iterator.next();
          return next.done ? next : { done: false, value: link(next.value) };
        },
        async return() {
          await iterator.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/**
 * A mount prefix in its one spelling: '' for the root, else `/segment[/segment...]` without a
 * trailing slash (`api/memory/` → `/api/memory`).
 */
export function normalizeBasePath(basePath: string | undefined): string {
  const trimmed = (basePath ?? '').trim().replace(/\/+$/, '');
  if (trimmed === '') return '';
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}
