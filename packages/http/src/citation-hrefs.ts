/**
 * Core writes citation links as root paths (`/v1/agents/{agent_id}/sources/{source_id}`), as if
 * the API were served at the root. Mounted under a prefix (`/api/memory`), the http layer puts the
 * prefix in front, so a client following `href` against the host reaches the same handler.
 * Bodies without `citations` (and links not starting with `/v1/`) are returned unchanged.
 */
export function mountCitationHrefs<T>(body: T, basePath: string): T {
  if (basePath === '' || body === null || typeof body !== 'object') return body;
  const citations = (body as { citations?: unknown }).citations;
  if (!Array.isArray(citations)) return body;
  return {
    ...body,
    citations: citations.map((citation: unknown) => {
      const href = (citation as { href?: unknown } | null)?.href;
      return typeof href === 'string' && href.startsWith('/v1/') ? { ...(citation as object), href: `${basePath}${href}` } : citation;
    }),
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
