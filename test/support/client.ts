/** A small HTTP client for the e2e tests: JSON in, status + headers + parsed JSON out. */
export type ApiResponse<T = any> = { status: number; headers: Headers; body: T; text: string };

export function client(baseUrl: string, key: string | null) {
  async function call<T = any>(
    method: string,
    path: string,
    options: { body?: unknown; rawBody?: string; headers?: Record<string, string>; key?: string | null } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const bearer = options.key === undefined ? key : options.key;
    if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(`${baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }
  return {
    call,
    get: <T = any>(path: string, options?: Parameters<typeof call>[2]) => call<T>('GET', path, options),
    post: <T = any>(path: string, body?: unknown, options?: Parameters<typeof call>[2]) => call<T>('POST', path, { ...options, body }),
    patch: <T = any>(path: string, body?: unknown, options?: Parameters<typeof call>[2]) => call<T>('PATCH', path, { ...options, body }),
    delete: <T = any>(path: string, options?: Parameters<typeof call>[2]) => call<T>('DELETE', path, options),
  };
}

export type Client = ReturnType<typeof client>;

/**
 * Polls `fn` until it returns a truthy value, 25 ms apart. Bounded by a generous deadline (60 s)
 * rather than a count, so a loaded CI machine slows the test down instead of failing it.
 */
export async function eventually<T>(fn: () => Promise<T | null | undefined | false>, what = 'condition', deadlineMs = 60_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Creates an agent and waits until it is ready. */
export async function readyAgent(api: Client, config: Record<string, unknown> = { role: 'assistant', objective: 'remember what users say' }) {
  const created = await api.post('/v1/agents', { agent_config: config });
  if (created.status !== 202) throw new Error(`create agent: ${created.status} ${created.text}`);
  return eventually(async () => {
    const agent = await api.get(`/v1/agents/${created.body.agent_id}`);
    return agent.body.status === 'ready' ? agent.body : null;
  }, 'agent ready');
}

/** Asserts the exact spec error body shape and returns it. */
export function errorShape(response: ApiResponse) {
  return { status: response.status, code: response.body?.code, keys: Object.keys(response.body ?? {}).sort(), requestIdMatches: response.body?.request_id === response.headers.get('x-request-id') };
}

/** Every ledger entry of the key's organization (all `GET /v1/billing` pages) and its balance. */
export async function readLedger(api: Client): Promise<{ balance: string; entries: { cost: string; route: string; in_words?: number }[] }> {
  const entries: { cost: string; route: string; in_words?: number }[] = [];
  let cursor: string | null = null;
  let balance = '';
  do {
    const page: ApiResponse = await api.get(`/v1/billing${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (page.status !== 200) throw new Error(`billing: ${page.status} ${page.text}`);
    balance = balance || page.body.balance;
    entries.push(...page.body.entries);
    cursor = page.body.next_cursor;
  } while (cursor);
  return { balance, entries };
}
