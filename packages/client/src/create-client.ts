import { MemoryAgentsError, errorFromResponse } from './errors.js';
import { readChatStream } from './chat-stream.js';
import { toUploadBlob, type UploadInput } from './uploads.js';
import type { ClientOptions, IdempotentRequestOptions, ObserveFileOptions, RequestOptions, RetryOptions, SourceFile, WaitOptions } from './client-options.js';
export type { ClientOptions, IdempotentRequestOptions, ObserveFileOptions, RequestOptions, RetryOptions, SourceFile, WaitOptions } from './client-options.js';
import type {
  Agent,
  ChatStreamEvent,
  ObservationStatus,
  QueryParameters,
  RequestBody,
  ResponseBody,
  Schemas,
} from './types.js';


type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

type CallOptions = RequestOptions & {
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  form?: FormData;
  idempotencyKey?: string;
  accept?: string;
};

const FINAL_OBSERVATION_STATES: ReadonlySet<ObservationStatus['status']> = new Set(['committed', 'failed', 'cancelled']);

/**
 * A typed client of the memory-agents `/v1` API. It uses only `fetch`, web streams and `Blob`,
 * so it runs on Node 20+, Bun, Deno and edge runtimes. Every non-2xx answer is thrown as a
 * `MemoryAgentsError`.
 *
 * @example
 * const client = createClient({ baseUrl: 'http://127.0.0.1:8787', apiKey: process.env.MEMORY_AGENTS_API_KEY! });
 * const agent = await client.agents.waitUntilReady((await client.agents.create({ agent_config: { role: 'assistant', objective: 'remember' } })).agent_id);
 */
export function createClient(options: ClientOptions) {
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

  async function json<T>(method: Method, path: string, call?: CallOptions): Promise<T> {
    const response = await send(method, path, call);
    return (await response.json()) as T;
  }

  const agentPath = (agentId: string) => `/v1/agents/${encodeURIComponent(agentId)}`;
  const threadPath = (agentId: string, threadId: string) => `${agentPath(agentId)}/threads/${encodeURIComponent(threadId)}`;

  const session = {
    /** `GET /v1/session`: the organization the key resolves to, and its upload limits. */
    get: (request?: RequestOptions) => json<ResponseBody<'getSession'>>('GET', '/v1/session', request),
  };

  const agents = {
    /** `POST /v1/agents` (202): the agent starts `initializing`; see `waitUntilReady`. */
    create: (body: RequestBody<'createAgent'>, request?: RequestOptions) => json<ResponseBody<'createAgent'>>('POST', '/v1/agents', { ...request, json: body }),
    /** `GET /v1/agents`: every live agent, newest first. */
    list: (request?: RequestOptions) => json<ResponseBody<'listAgents'>>('GET', '/v1/agents', request),
    /** `GET /v1/agents/{agent_id}`, with the threads the caller reaches. */
    get: (agentId: string, request?: RequestOptions) => json<ResponseBody<'getAgent'>>('GET', agentPath(agentId), request),
    /** `PATCH /v1/agents/{agent_id}`: supplied fields change; `agent_config` is replaced whole. */
    update: (agentId: string, body: RequestBody<'updateAgent'>, request?: RequestOptions) =>
      json<ResponseBody<'updateAgent'>>('PATCH', agentPath(agentId), { ...request, json: body }),
    /** `DELETE /v1/agents/{agent_id}` (202). */
    delete: (agentId: string, request?: RequestOptions) => json<ResponseBody<'deleteAgent'>>('DELETE', agentPath(agentId), request),
    /** `GET /v1/agents/{agent_id}/logs`: who used the agent, where and when. */
    logs: (agentId: string, query: QueryParameters<'listAgentLogs'> = {}, request?: RequestOptions) =>
      json<ResponseBody<'listAgentLogs'>>('GET', `${agentPath(agentId)}/logs`, { ...request, query }),
    /**
     * `POST /v1/agents/{agent_id}/recall`: the memory context and citations retrieval builds for
     * a query, as chat would use them; nothing is learned (observe-and-enrich also learns).
     */
    recall: (agentId: string, body: RequestBody<'recall'>, request?: RequestOptions) =>
      json<ResponseBody<'recall'>>('POST', `${agentPath(agentId)}/recall`, { ...request, json: body }),
    /**
     * Polls `GET /v1/agents/{agent_id}` until the agent is `ready`; a `failed` agent throws
     * (`agent_not_ready`: delete it and create a new one).
     */
    async waitUntilReady(agentId: string, wait: WaitOptions = {}): Promise<Agent> {
      return poll(wait, async () => {
        const agent = await agents.get(agentId, { ...(wait.signal ? { signal: wait.signal } : {}), ...endUserOf(wait) });
        if (agent.status === 'ready') return agent;
        if (agent.status === 'failed') {
          throw new MemoryAgentsError({ status: 409, code: 'agent_not_ready', requestId: null, message: `Agent ${agentId} failed to initialize; delete it and create a new one.` });
        }
        return null;
      }, `agent ${agentId} to be ready`);
    },
  };

  const threads = {
    /** `POST /v1/agents/{agent_id}/threads` (201), recorded against `endUser` when set. */
    create: (agentId: string, body: RequestBody<'createThread'> = {}, request?: RequestOptions) =>
      json<ResponseBody<'createThread'>>('POST', `${agentPath(agentId)}/threads`, { ...request, json: body }),
    /** `GET …/threads/{thread_id}`, with up to 200 recent messages. */
    get: (agentId: string, threadId: string, request?: RequestOptions) => json<ResponseBody<'getThread'>>('GET', threadPath(agentId, threadId), request),
    /** `DELETE …/threads/{thread_id}` (202). */
    delete: (agentId: string, threadId: string, request?: RequestOptions) =>
      json<ResponseBody<'deleteThread'>>('DELETE', threadPath(agentId, threadId), request),
    /** `POST …/observe` (202): observations to learn; follow the job with `waitForObservation`. */
    observe: (agentId: string, threadId: string, body: RequestBody<'observe'>, request?: IdempotentRequestOptions) =>
      json<ResponseBody<'observe'>>('POST', `${threadPath(agentId, threadId)}/observe`, { ...request, json: body }),
    /** `GET …/observe/{observation_id}/status`. */
    observationStatus: (agentId: string, threadId: string, observationId: string, request?: RequestOptions) =>
      json<ResponseBody<'getObservationStatus'>>('GET', `${threadPath(agentId, threadId)}/observe/${encodeURIComponent(observationId)}/status`, request),
    /** `GET …/observe/{observation_id}/receipt` (an extension): per turn, what a finished job learned and cost; 409 until final. */
    observationReceipt: (agentId: string, threadId: string, observationId: string, request?: RequestOptions) =>
      json<ResponseBody<'getObservationReceipt'>>('GET', `${threadPath(agentId, threadId)}/observe/${encodeURIComponent(observationId)}/receipt`, request),
    /** `GET …/observations` (an extension): the thread's observation jobs, newest first, as statuses. */
    listObservations: (agentId: string, threadId: string, query: QueryParameters<'listObservations'> = {}, request?: RequestOptions) =>
      json<ResponseBody<'listObservations'>>('GET', `${threadPath(agentId, threadId)}/observations`, { ...request, query }),
    /** `GET …/learning`: every turn of the thread that was not learned. */
    learning: (agentId: string, threadId: string, query: QueryParameters<'getThreadLearning'> = {}, request?: RequestOptions) =>
      json<ResponseBody<'getThreadLearning'>>('GET', `${threadPath(agentId, threadId)}/learning`, { ...request, query }),
    /** `GET …/turns` (an extension): the turns the thread observed, oldest observation first, paged by `cursor`. */
    turns: (agentId: string, threadId: string, query: QueryParameters<'listThreadTurns'> = {}, request?: RequestOptions) =>
      json<ResponseBody<'listThreadTurns'>>('GET', `${threadPath(agentId, threadId)}/turns`, { ...request, query }),
    /** `POST …/chat`: an answer from memory, with citations. */
    chat: (agentId: string, threadId: string, body: RequestBody<'chat'>, request?: RequestOptions) =>
      json<ResponseBody<'chat'>>('POST', `${threadPath(agentId, threadId)}/chat`, { ...request, json: body }),
    /**
     * `POST …/chat/stream`: the answer as typed server-sent events, `context`, `delta`…, then
     * `done` or `error`. Refusals before the stream starts throw; breaking out of the loop closes
     * the stream (and frees the answer place on the server).
     */
    async *chatStream(agentId: string, threadId: string, body: RequestBody<'chatStream'>, request?: RequestOptions): AsyncGenerator<ChatStreamEvent, void, undefined> {
      const response = await send('POST', `${threadPath(agentId, threadId)}/chat/stream`, { ...request, json: body, accept: 'text/event-stream' });
      yield* readChatStream(response);
    },
    /** `POST …/observe-and-respond`: answers like chat and learns the message and the answer. */
    observeAndRespond: (agentId: string, threadId: string, body: RequestBody<'observeAndRespond'>, request?: RequestOptions) =>
      json<ResponseBody<'observeAndRespond'>>('POST', `${threadPath(agentId, threadId)}/observe-and-respond`, { ...request, json: body }),
    /** `POST …/observe-and-enrich`: learns the message and returns memory context, no answer. */
    observeAndEnrich: (agentId: string, threadId: string, body: RequestBody<'observeAndEnrich'>, request?: RequestOptions) =>
      json<ResponseBody<'observeAndEnrich'>>('POST', `${threadPath(agentId, threadId)}/observe-and-enrich`, { ...request, json: body }),
    /**
     * `POST …/observe-file` (202): uploads a document from a `Blob`/`File`, bytes or a
     * `ReadableStream` (read into memory first, so a retry can send it again). On Node,
     * `fileFromPath` from `@memory-agents/client/node` makes a `File` from a path.
     */
    async observeFile(agentId: string, threadId: string, file: UploadInput, upload: ObserveFileOptions = {}): Promise<ResponseBody<'observeFile'>> {
      const { filename, mediaType, allowDuplicate, maxChars, overlapChars, strategy, ...request } = upload;
      const blob = await toUploadBlob(file, mediaType);
      const name = filename ?? fileName(file);
      if (!name) throw new TypeError('observeFile needs a filename when the input is not a File: pass { filename }.');
      const form = new FormData();
      form.append('file', blob, name);
      if (allowDuplicate !== undefined) form.append('allow_duplicate', String(allowDuplicate));
      if (maxChars !== undefined) form.append('max_chars', String(maxChars));
      if (overlapChars !== undefined) form.append('overlap_chars', String(overlapChars));
      if (strategy !== undefined) form.append('strategy', strategy);
      return json<ResponseBody<'observeFile'>>('POST', `${threadPath(agentId, threadId)}/observe-file`, { ...request, form });
    },
  };

  const sources = {
    /** `GET …/threads/{thread_id}/sources`: uploads of the thread and whether they can be finished. */
    list: (agentId: string, threadId: string, request?: RequestOptions) =>
      json<ResponseBody<'listThreadSources'>>('GET', `${threadPath(agentId, threadId)}/sources`, request),
    /** `POST …/sources/{source_id}/finish-learning` (202): resume a stopped or failed upload. */
    finishLearning: (agentId: string, threadId: string, sourceId: string, body: RequestBody<'finishLearning'> = {}, request?: RequestOptions) =>
      json<ResponseBody<'finishLearning'>>('POST', `${threadPath(agentId, threadId)}/sources/${encodeURIComponent(sourceId)}/finish-learning`, {
        ...request,
        json: body,
      }),
    /** `GET /v1/agents/{agent_id}/sources/{source_id}`: the stored original (what citations link to). */
    async get(agentId: string, sourceId: string, request?: RequestOptions): Promise<SourceFile> {
      const response = await send('GET', `${agentPath(agentId)}/sources/${encodeURIComponent(sourceId)}`, { ...request, accept: '*/*' });
      const disposition = response.headers.get('content-disposition') ?? '';
      const encoded = /filename\*=UTF-8''([^;]+)/i.exec(disposition)?.[1];
      const plain = /filename="([^"]*)"/i.exec(disposition)?.[1];
      return {
        blob: await response.blob(),
        mediaType: response.headers.get('content-type') ?? 'application/octet-stream',
        filename: encoded !== undefined ? decodeURIComponent(encoded) : (plain ?? null),
      };
    },
  };

  const images = {
    /** `POST /v1/images` (201): an image (PNG, JPEG or WebP) for chat `images`. */
    async upload(file: UploadInput, upload: RequestOptions & { filename?: string; mediaType?: string } = {}): Promise<ResponseBody<'uploadImage'>> {
      const { filename, mediaType, ...request } = upload;
      const form = new FormData();
      form.append('file', await toUploadBlob(file, mediaType), filename ?? fileName(file) ?? 'image');
      return json<ResponseBody<'uploadImage'>>('POST', '/v1/images', { ...request, form });
    },
  };

  const erasures = {
    /**
     * `POST /v1/agents/{agent_id}/memories/erase` (202, an extension): erases everything derived
     * from exactly one of `source_id`, `thread_id`, `observation_id` or `end_user_id` (the
     * `X-SP-End-User` value) as a job; follow it with `waitUntilDone`.
     */
    erase: (agentId: string, body: RequestBody<'eraseMemories'>, request?: RequestOptions) =>
      json<ResponseBody<'eraseMemories'>>('POST', `${agentPath(agentId)}/memories/erase`, { ...request, json: body }),
    /** `GET /v1/agents/{agent_id}/erasures/{erasure_id}`: status and what was removed. */
    get: (agentId: string, erasureId: string, request?: RequestOptions) =>
      json<ResponseBody<'getErasure'>>('GET', `${agentPath(agentId)}/erasures/${encodeURIComponent(erasureId)}`, request),
    /** Polls an erasure until it is `completed` or `failed` and returns its last status. */
    waitUntilDone(agentId: string, erasureId: string, wait: WaitOptions = {}): Promise<ResponseBody<'getErasure'>> {
      return poll(wait, async () => {
        const erasure = await erasures.get(agentId, erasureId, { ...(wait.signal ? { signal: wait.signal } : {}), ...endUserOf(wait) });
        return erasure.status === 'completed' || erasure.status === 'failed' ? erasure : null;
      }, `erasure ${erasureId}`);
    },
  };

  const maintenance = {
    /** `POST /v1/agents/{agent_id}/maintenance` (201, an extension): a dry run of `kind`; the diff, nothing changed. */
    plan: (agentId: string, body: RequestBody<'planMaintenance'>, request?: IdempotentRequestOptions) =>
      json<ResponseBody<'planMaintenance'>>('POST', `${agentPath(agentId)}/maintenance`, { ...request, json: body }),
    /** `POST …/maintenance/{run_id}/apply`: applies exactly the dry run's diff (409 when anything changed since, or the guard refuses). */
    apply: (agentId: string, runId: string, request?: IdempotentRequestOptions) =>
      json<ResponseBody<'applyMaintenance'>>('POST', `${agentPath(agentId)}/maintenance/${encodeURIComponent(runId)}/apply`, { ...request }),
    /** `POST …/maintenance/{run_id}/undo`: reverses an applied run within its window. */
    undo: (agentId: string, runId: string, request?: IdempotentRequestOptions) =>
      json<ResponseBody<'undoMaintenance'>>('POST', `${agentPath(agentId)}/maintenance/${encodeURIComponent(runId)}/undo`, { ...request }),
    /** `GET …/maintenance/{run_id}`: the run with its diff. */
    get: (agentId: string, runId: string, request?: RequestOptions) =>
      json<ResponseBody<'getMaintenance'>>('GET', `${agentPath(agentId)}/maintenance/${encodeURIComponent(runId)}`, request),
    /** `GET …/maintenance`: the agent's runs, newest first. */
    list: (agentId: string, query: QueryParameters<'listMaintenance'> = {}, request?: RequestOptions) =>
      json<ResponseBody<'listMaintenance'>>('GET', `${agentPath(agentId)}/maintenance`, { ...request, query }),
  };

  const exports = {
    /** `POST /v1/agents/{agent_id}/exports` (202): starts an export job (an extension; `vectors: false` leaves vectors out). */
    create: (agentId: string, body: RequestBody<'createExport'> = {}, request?: RequestOptions) =>
      json<ResponseBody<'createExport'>>('POST', `${agentPath(agentId)}/exports`, { ...request, json: body }),
    /** `GET /v1/agents/{agent_id}/exports/{export_id}`: the job's status (`running`, `ready`, `failed`). */
    get: (agentId: string, exportId: string, request?: RequestOptions) =>
      json<ResponseBody<'getExport'>>('GET', `${agentPath(agentId)}/exports/${encodeURIComponent(exportId)}`, request),
    /** `GET …/exports/{export_id}/download`: the export file, JSON lines (docs/export-format.md). */
    async download(agentId: string, exportId: string, request?: RequestOptions): Promise<string> {
      const response = await send('GET', `${agentPath(agentId)}/exports/${encodeURIComponent(exportId)}/download`, { ...request, accept: 'application/x-ndjson' });
      return response.text();
    },
  };

  const billing = {
    /** `GET /v1/billing`: balance, settings and ledger entries, newest first. */
    get: (query: QueryParameters<'getBilling'> = {}, request?: RequestOptions) => json<ResponseBody<'getBilling'>>('GET', '/v1/billing', { ...request, query }),
  };

  const memoryPath = (agentId: string, memoryId: string) => `${agentPath(agentId)}/memories/${encodeURIComponent(memoryId)}`;
  const memories = {
    /** `GET /v1/agents/{agent_id}/memories`: newest first, filtered; pass `next_cursor` back as `cursor`. */
    list: (agentId: string, query: QueryParameters<'listMemories'> = {}, request?: RequestOptions) =>
      json<ResponseBody<'listMemories'>>('GET', `${agentPath(agentId)}/memories`, { ...request, query }),
    /** `GET …/memories/{memory_id}`: text, dates, provenance and the credits its learning cost. */
    get: (agentId: string, memoryId: string, request: RequestOptions & { query?: QueryParameters<'getMemory'> } = {}) => {
      // `include_expired` (issue 42) rides in the request options, so callers of the earlier
      // `get(agentId, memoryId, request)` keep working.
      const { query = {}, ...rest } = request;
      return json<ResponseBody<'getMemory'>>('GET', memoryPath(agentId, memoryId), { ...rest, query });
    },
    /**
     * `PATCH …/memories/{memory_id}` (extension, issue 42): `{ text?, pinned?, expires_at? }`: edit it
     * (the answer is the new memory; the old stays as superseded history), pin or unpin it, set
     * (ISO date-time) or clear (null) when it expires.
     */
    update: (agentId: string, memoryId: string, body: RequestBody<'updateMemory'>, request?: RequestOptions) =>
      json<ResponseBody<'updateMemory'>>('PATCH', memoryPath(agentId, memoryId), { ...request, json: body }),
    /** `POST …/memories/{memory_id}/forget` (extension, issue 42): hidden everywhere at once, restorable for a window, then erased. */
    forget: (agentId: string, memoryId: string, body: RequestBody<'forgetMemory'>, request?: RequestOptions) =>
      json<ResponseBody<'forgetMemory'>>('POST', `${memoryPath(agentId, memoryId)}/forget`, { ...request, json: body }),
    /** `POST …/memories/{memory_id}/restore` (extension, issue 42): undoes `forget` within its window (else 409 `conflict`). */
    restore: (agentId: string, memoryId: string, request?: RequestOptions) =>
      json<ResponseBody<'restoreMemory'>>('POST', `${memoryPath(agentId, memoryId)}/restore`, { ...request }),
    /** `POST …/memories/search`: chat's retrieval for a query, each hit with its rank and every signal's share of its score. */
    search: (agentId: string, body: RequestBody<'searchMemories'>, request?: RequestOptions) =>
      json<ResponseBody<'searchMemories'>>('POST', `${agentPath(agentId)}/memories/search`, { ...request, json: body }),
    /** `DELETE …/memories/{memory_id}` (204). */
    async delete(agentId: string, memoryId: string, request?: RequestOptions): Promise<void> {
      await send('DELETE', memoryPath(agentId, memoryId), request);
    },
  };

  const webhookPath = (webhookId: string) => `/v1/webhooks/${encodeURIComponent(webhookId)}`;
  /** Webhooks (an opt-in extension the server's operator switches on; 503 `service_not_configured` otherwise). */
  const webhooks = {
    /** `POST /v1/webhooks` (201): the answer carries the signing `secret` (shown again only on rotation). */
    create: (body: RequestBody<'createWebhook'>, request?: RequestOptions) => json<ResponseBody<'createWebhook'>>('POST', '/v1/webhooks', { ...request, json: body }),
    /** `GET /v1/webhooks`: the organization's endpoints, oldest first. */
    list: (request?: RequestOptions) => json<ResponseBody<'listWebhooks'>>('GET', '/v1/webhooks', request),
    /** `GET /v1/webhooks/{webhook_id}`. */
    get: (webhookId: string, request?: RequestOptions) => json<ResponseBody<'getWebhook'>>('GET', webhookPath(webhookId), request),
    /** `PATCH /v1/webhooks/{webhook_id}`: `{ enabled: true }` re-enables one disabled after failures. */
    update: (webhookId: string, body: RequestBody<'updateWebhook'>, request?: RequestOptions) =>
      json<ResponseBody<'updateWebhook'>>('PATCH', webhookPath(webhookId), { ...request, json: body }),
    /** `DELETE /v1/webhooks/{webhook_id}`: the endpoint and its delivery log. */
    delete: (webhookId: string, request?: RequestOptions) => json<ResponseBody<'deleteWebhook'>>('DELETE', webhookPath(webhookId), request),
    /** `POST /v1/webhooks/{webhook_id}/rotate-secret`: a new secret; the previous one still signs for the rotation window. */
    rotateSecret: (webhookId: string, request?: RequestOptions) => json<ResponseBody<'rotateWebhookSecret'>>('POST', `${webhookPath(webhookId)}/rotate-secret`, request),
    /** `GET /v1/webhooks/{webhook_id}/deliveries`: the delivery log, newest first. */
    deliveries: (webhookId: string, query: QueryParameters<'listWebhookDeliveries'> = {}, request?: RequestOptions) =>
      json<ResponseBody<'listWebhookDeliveries'>>('GET', `${webhookPath(webhookId)}/deliveries`, { ...request, query }),
  };

  /**
   * Polls an observation job until it is final (`committed`, `failed` or `cancelled`) and
   * returns its last status; `interrupted` jobs resume by themselves, so polling goes on. The
   * delay starts at `intervalMs` and grows by half per poll, up to 5 s.
   */
  function waitForObservation(agentId: string, threadId: string, observationId: string, wait: WaitOptions = {}): Promise<ObservationStatus> {
    return poll(wait, async () => {
      const status = await threads.observationStatus(agentId, threadId, observationId, { ...(wait.signal ? { signal: wait.signal } : {}), ...endUserOf(wait) });
      return FINAL_OBSERVATION_STATES.has(status.status) ? status : null;
    }, `observation ${observationId}`);
  }

  return { session, agents, threads, memories, sources, images, erasures, exports, maintenance, billing, webhooks, waitForObservation };
}

/** The client `createClient` returns. */
export type MemoryAgentsClient = ReturnType<typeof createClient>;

function endUserOf(wait: WaitOptions): { endUser?: string | null } {
  return wait.endUser === undefined ? {} : { endUser: wait.endUser };
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
