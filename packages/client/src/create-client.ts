import { MemoryAgentsError, errorFromResponse } from './errors.js';
import { readChatStream } from './chat-stream.js';
import { OPERATIONS } from './generated/operations.js';
import { REQUEST_OPTION_KEYS, type ClientOperations, type OperationEntry } from './operation-types.js';
import { toUploadBlob, type UploadInput } from './uploads.js';
import type { ClientOptions, RequestOptions, RetryOptions, SourceFile, WaitOptions } from './client-options.js';
export type { ClientOptions, IdempotentRequestOptions, RequestOptions, RetryOptions, SourceFile, WaitOptions } from './client-options.js';
import type { Agent, Erasure, ObservationStatus } from './types.js';

type Method = OperationEntry['method'];

type CallOptions = RequestOptions & {
  query?: Record<string, unknown>;
  json?: unknown;
  form?: FormData;
  idempotencyKey?: string;
  accept?: string;
};

const FINAL_OBSERVATION_STATES: ReadonlySet<ObservationStatus['status']> = new Set(['committed', 'failed', 'cancelled']);

/** The client `createClient` returns: every operation of the contract, plus the waits that poll them. */
export type MemoryAgentsClient = ClientOperations & {
  agents: ClientOperations['agents'] & {
    /**
     * Polls `GET /v1/agents/{agent_id}` until the agent is `ready`; a `failed` agent throws
     * (`agent_not_ready`: delete it and create a new one).
     */
    waitUntilReady(options: { agentId: string } & WaitOptions): Promise<Agent>;
  };
  erasures: ClientOperations['erasures'] & {
    /** Polls an erasure until it is `completed` or `failed` and returns its last status. */
    waitUntilDone(options: { agentId: string; erasureId: string } & WaitOptions): Promise<Erasure>;
  };
  /**
   * Polls an observation job until it is final (`committed`, `failed` or `cancelled`) and
   * returns its last status; `interrupted` jobs resume by themselves, so polling goes on. The
   * delay starts at `intervalMs` and grows by half per poll, up to 5 s.
   */
  waitForObservation(options: { agentId: string; threadId: string; observationId: string } & WaitOptions): Promise<ObservationStatus>;
};

/**
 * A typed client of the memory-agents `/v1` API, derived from the contract: every operation is
 * `client.<group>.<name>(options)` with one options object (path ids, body or query fields,
 * request options). It uses only `fetch`, web streams and `Blob`, so it runs on Node 20+, Bun,
 * Deno and edge runtimes. Every non-2xx answer is thrown as a `MemoryAgentsError`.
 *
 * @example
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8787', apiKey: process.env.MEMORY_AGENTS_API_KEY! });
 * const { agent_id } = await client.agents.create({ agent_config: { role: 'assistant', objective: 'remember' } });
 * const agent = await client.agents.waitUntilReady({ agentId: agent_id });
 */
export function createClient(options: ClientOptions): MemoryAgentsClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);

  async function send(method: Method, path: string, call: CallOptions = {}): Promise<Response> {
    const url = new URL(`${baseUrl}${path}`);
    for (const [name, value] of Object.entries(call.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const headers = new Headers({ ...options.headers, ...call.headers });
    headers.set('authorization', `Bearer ${options.apiKey}`);
    headers.set('accept', call.accept ?? 'application/json');
    const endUser = call.endUser === undefined ? options.endUser : call.endUser;
    if (endUser !== undefined && endUser !== null) headers.set('x-sp-end-user', endUser);
    if (call.idempotencyKey !== undefined) headers.set('idempotency-key', call.idempotencyKey);
    let body: string | FormData | undefined;
    if (call.json !== undefined) {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(call.json);
    } else if (call.form) body = call.form;

    const retry = normalizeRetries(call.retries ?? options.retries);
    for (let attempt = 0; ; attempt++) {
      const response = await fetchImpl(url, { method, headers, ...(body === undefined ? {} : { body }), ...(call.signal ? { signal: call.signal } : {}) });
      if (response.ok) return response;
      const error = await errorFromResponse(response);
      const delay = attempt < retry.max && (response.status === 429 || response.status === 503) ? retryDelay(error, attempt) : null;
      if (delay === null || delay > retry.maxDelayMs) throw error;
      await sleep(delay, call.signal);
    }
  }

  /** One contract operation as a call: its options object split into ids, request options and the body, query or form. */
  function bind(entry: OperationEntry, name: string): (options?: Record<string, unknown>) => unknown {
    // Worked out once per operation: the path's literal pieces (even indexes) around its ids, the
    // ids' option names, and every key that is not body, query or form.
    const pieces = entry.path.split(/\{(\w+)\}/);
    const ids = pieces.filter((_piece, at) => at % 2 === 1).map((param) => param.replace(/_(\w)/g, (_underscore, letter: string) => letter.toUpperCase()));
    const taken = new Set<string>([...REQUEST_OPTION_KEYS, ...ids]);
    const prepare = (given: Record<string, unknown> = {}) => {
      let path = pieces[0]!;
      ids.forEach((key, at) => {
        const value = given[key];
        if (typeof value !== 'string' || value === '') throw new TypeError(`${name} needs \`${key}\` (a non-empty string).`);
        path += encodeURIComponent(value) + pieces[2 * at + 2]!;
      });
      const request: CallOptions = {};
      for (const key of REQUEST_OPTION_KEYS) if (given[key] !== undefined) (request as Record<string, unknown>)[key] = given[key];
      const rest: Record<string, unknown> = {};
      for (const key of Object.keys(given)) if (!taken.has(key)) rest[key] = given[key];
      if (entry.input === 'body') request.json = rest;
      if (entry.input === 'query') request.query = rest;
      return { path, request, rest };
    };
    if (entry.response === 'stream') {
      return async function* (given?: Record<string, unknown>) {
        const { path, request } = prepare(given);
        yield* readChatStream(await send(entry.method, path, { ...request, accept: 'text/event-stream' }));
      };
    }
    return async (given?: Record<string, unknown>) => {
      const { path, request, rest } = prepare(given);
      if (entry.input === 'upload') request.form = await uploadForm(rest, entry.fields ?? [], name);
      if (entry.response === 'binary') return readFile(await send(entry.method, path, { ...request, accept: '*/*' }));
      const response = await send(entry.method, path, request);
      return entry.response === 'empty' ? undefined : response.json();
    };
  }

  const operations = Object.fromEntries(
    Object.entries(OPERATIONS).map(([group, calls]) => [
      group,
      Object.fromEntries(Object.entries(calls as Record<string, OperationEntry>).map(([name, entry]) => [name, bind(entry, `${group}.${name}`)])),
    ]),
  ) as unknown as ClientOperations;

  const client: MemoryAgentsClient = {
    ...operations,
    agents: {
      ...operations.agents,
      waitUntilReady: ({ agentId, ...wait }) =>
        poll(wait, async () => {
          const agent = await operations.agents.get({ agentId, ...pollRequest(wait) });
          if (agent.status === 'ready') return agent;
          if (agent.status === 'failed') {
            throw new MemoryAgentsError({ status: 409, code: 'agent_not_ready', requestId: null, message: `Agent ${agentId} failed to initialize; delete it and create a new one.` });
          }
          return null;
        }, `agent ${agentId} to be ready`),
    },
    erasures: {
      ...operations.erasures,
      waitUntilDone: ({ agentId, erasureId, ...wait }) =>
        poll(wait, async () => {
          const erasure = await operations.erasures.get({ agentId, erasureId, ...pollRequest(wait) });
          return erasure.status === 'completed' || erasure.status === 'failed' ? erasure : null;
        }, `erasure ${erasureId}`),
    },
    waitForObservation: ({ agentId, threadId, observationId, ...wait }) =>
      poll(wait, async () => {
        const status = await operations.threads.observationStatus({ agentId, threadId, observationId, ...pollRequest(wait) });
        return FINAL_OBSERVATION_STATES.has(status.status) ? status : null;
      }, `observation ${observationId}`),
  };
  return client;
}

/** The multipart body of an upload call: `file` (named by `filename` or the File's name) and the form's text fields. */
async function uploadForm(given: Record<string, unknown>, fields: readonly string[], name: string): Promise<FormData> {
  const { file, filename, mediaType, ...rest } = given as { file?: UploadInput; filename?: string; mediaType?: string } & Record<string, unknown>;
  if (file === undefined || file === null) throw new TypeError(`${name} needs \`file\`.`);
  const partName = filename ?? fileName(file) ?? (name === 'images.upload' ? 'image' : undefined);
  if (!partName) throw new TypeError(`${name} needs a filename when the file is not a File: pass { filename }.`);
  const form = new FormData();
  form.append('file', await toUploadBlob(file, mediaType), partName);
  for (const field of fields) if (rest[field] !== undefined) form.append(field, String(rest[field]));
  return form;
}

/** A stored file answer (a source's original, an export): its bytes, media type and filename. */
async function readFile(response: Response): Promise<SourceFile> {
  const disposition = response.headers.get('content-disposition') ?? '';
  const encoded = /filename\*=UTF-8''([^;]+)/i.exec(disposition)?.[1];
  const plain = /filename="([^"]*)"/i.exec(disposition)?.[1];
  return {
    blob: await response.blob(),
    mediaType: response.headers.get('content-type') ?? 'application/octet-stream',
    filename: encoded !== undefined ? decodeURIComponent(encoded) : (plain ?? null),
  };
}

function pollRequest(wait: WaitOptions): RequestOptions {
  return { ...(wait.signal ? { signal: wait.signal } : {}), ...(wait.endUser === undefined ? {} : { endUser: wait.endUser }) };
}

function fileName(file: UploadInput): string | undefined {
  const name = (file as { name?: unknown }).name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

function normalizeRetries(retries: number | RetryOptions | undefined): Required<RetryOptions> {
  if (retries === undefined) return { max: 0, maxDelayMs: 60_000 };
  if (typeof retries === 'number') return { max: Math.max(0, Math.floor(retries)), maxDelayMs: 60_000 };
  return { max: Math.max(0, Math.floor(retries.max)), maxDelayMs: retries.maxDelayMs ?? 60_000 };
}

/** ms before the next try: `Retry-After` when sent (spec "Retry rules" 2), else 1 s doubling (rule 1). */
function retryDelay(error: MemoryAgentsError, attempt: number): number {
  return error.retryAfter !== undefined ? error.retryAfter * 1000 : 1000 * 2 ** attempt;
}

async function poll<T>(wait: WaitOptions, check: () => Promise<T | null>, what: string): Promise<T> {
  const deadline = Date.now() + (wait.timeoutMs ?? 300_000);
  let delay = wait.intervalMs ?? 100;
  for (;;) {
    const result = await check();
    if (result !== null) return result;
    if (Date.now() + delay > deadline) throw new Error(`Timed out waiting for ${what} after ${wait.timeoutMs ?? 300_000} ms.`);
    await sleep(delay, wait.signal);
    delay = Math.min(5_000, Math.ceil(delay * 1.5));
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
