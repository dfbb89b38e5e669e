import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * One scripted reply. `answer` and `stream` both serve either kind of request: a streaming request
 * gets SSE chunks, a plain one gets a chat completion with the whole text.
 */
export type ScriptedBehaviour =
  /**
   * A chat completion with `text` (as SSE word chunks when the request streams), and `usage` when
   * given (streaming: as a last chunk with no choices, if the request asked `stream_options.include_usage`).
   */
  | { type: 'answer'; text: string; delayMs?: number; usage?: ChatUsage }
  /** SSE `chunks` with `delayMs` between them, then `usage` (as for `answer`), then `[DONE]` (unless `done: false`). */
  | { type: 'stream'; chunks: string[]; delayMs?: number; done?: boolean; usage?: ChatUsage }
  /** Raw SSE events: each string is sent as one `data:` line (no `[DONE]` is added). */
  | { type: 'sse'; data: string[]; delayMs?: number }
  /** Never answers; the request stays open until the client closes the connection. */
  | { type: 'stall' }
  /** An error status (429, 500, 401 …) with optional `Retry-After` and body. */
  | { type: 'status'; status: number; retryAfter?: string; retryAfterMs?: string; body?: string }
  /** 200 with a body that is not JSON (or `body` as given). */
  | { type: 'malformed'; body?: string }
  /** 200 with `body` as JSON. */
  | { type: 'json'; body: unknown; delayMs?: number }
  /**
   * An embeddings response: deterministic vectors of `dimensions` (the request's, else 4) for each
   * input, listed in reverse order when `reverse` so the client must sort by `index`.
   */
  | { type: 'embeddings'; dimensions?: number; reverse?: boolean; delayMs?: number; usage?: { prompt_tokens: number; total_tokens: number } }
  /** Computes the reply from the request. */
  | { type: 'auto' }
  /** Chooses the behaviour from the parsed request body (e.g. a JSON reply built from the prompt). */
  | { type: 'compute'; reply: (body: any) => Exclude<ScriptedBehaviour, { type: 'compute' }> };

/** A chat completion's `usage` as providers send it. */
export type ChatUsage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };

export type ScriptedRoute = 'chat' | 'embeddings';

export type RecordedRequest = {
  route: ScriptedRoute | 'unknown';
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (or the raw text when it is not JSON). */
  body: any;
  behaviour: ScriptedBehaviour['type'];
  /** True once the client closed the connection before the reply was complete. */
  closedByClient: boolean;
};

export type ScriptedOpenaiServer = {
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseURL: string;
  readonly requests: RecordedRequest[];
  /** Most requests ever open at once. */
  readonly maxInFlight: number;
  readonly inFlight: number;
  /** Adds behaviours to a route's queue, served in order; an empty queue serves the route's fallback. */
  enqueue(route: ScriptedRoute, ...behaviours: ScriptedBehaviour[]): void;
  /** Resolves once `count` requests were received. */
  waitForRequests(count: number): Promise<void>;
  /** Resolves once the client closed request number `index` (0-based) early. */
  waitForClientClose(index: number): Promise<void>;
  close(): Promise<void>;
};

export type ScriptedOpenaiServerOptions = {
  /** Reply when a route's queue is empty. @default `{ type: 'auto' }` for both routes */
  fallback?: Partial<Record<ScriptedRoute, ScriptedBehaviour>>;
};

/**
 * A scripted OpenAI-compatible HTTP server on 127.0.0.1 (port 0) for adapter tests. The provider
 * lives outside our process, so a double at the HTTP boundary tests the real adapter code: retries,
 * timeouts, aborts, SSE parsing and the concurrency limit.
 */
export async function startScriptedOpenaiServer(options: ScriptedOpenaiServerOptions = {}): Promise<ScriptedOpenaiServer> {
  const queues: Record<ScriptedRoute, ScriptedBehaviour[]> = { chat: [], embeddings: [] };
  const fallback: Record<ScriptedRoute, ScriptedBehaviour> = { chat: { type: 'auto' }, embeddings: { type: 'auto' }, ...options.fallback };
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const waiters = new Set<() => void>();
  let inFlight = 0;
  let maxInFlight = 0;
  const notify = () => waiters.forEach((waiter) => waiter());
  const waitUntil = (condition: () => boolean) =>
    new Promise<void>((resolve) => {
      if (condition()) return resolve();
      const waiter = () => {
        if (!condition()) return;
        waiters.delete(waiter);
        resolve();
      };
      waiters.add(waiter);
    });

  const server = createServer((request, response) => {
    void handle(request, response);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(request: IncomingMessage, response: ServerResponse) {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let finished = false;
    const path = (request.url ?? '').split('?')[0] ?? '';
    const route: ScriptedRoute | 'unknown' = path.endsWith('/chat/completions') ? 'chat' : path.endsWith('/embeddings') ? 'embeddings' : 'unknown';
    let behaviour: ScriptedBehaviour =
      route === 'unknown' ? { type: 'status', status: 404, body: '{"error":{"message":"no such route"}}' } : (queues[route].shift() ?? fallback[route]);
    const record: RecordedRequest = { route, method: request.method ?? '', path, headers: request.headers, body: undefined, behaviour: behaviour.type, closedByClient: false };
    requests.push(record);
    response.on('close', () => {
      if (!response.writableFinished) record.closedByClient = true;
      if (!finished) {
        finished = true;
        inFlight -= 1;
      }
      notify();
    });

    const raw = await readBody(request);
    try {
      record.body = JSON.parse(raw);
    } catch {
      record.body = raw;
    }
    if (behaviour.type === 'compute') {
      behaviour = behaviour.reply(record.body);
      record.behaviour = behaviour.type;
    }
    notify();
    const alive = () => !response.destroyed && !record.closedByClient;
    const body = (record.body ?? {}) as { stream?: boolean; stream_options?: { include_usage?: boolean }; input?: unknown; dimensions?: number; messages?: { content?: unknown }[] };

    const sendJson = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      if (!alive()) return;
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(value));
    };
    const sendText = async (text: string, delayMs = 0, usage?: ChatUsage) => {
      if (body.stream) return sendStream(splitWords(text), delayMs, true, usage);
      await wait(delayMs);
      sendJson(200, completion(text, usage));
    };
    const sendStream = async (chunks: string[], delayMs: number, done: boolean, usage?: ChatUsage) => {
      if (!body.stream) {
        await wait(delayMs);
        return sendJson(200, completion(chunks.join(''), usage));
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      response.write(': scripted\n\n');
      for (const chunk of chunks) {
        if (!alive()) return;
        response.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: chunk } }] })}\n\n`);
        await wait(delayMs);
      }
      if (!alive()) return;
      if (usage && body.stream_options?.include_usage) response.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
      if (done) response.write('data: [DONE]\n\n');
      response.end();
    };

    switch (behaviour.type) {
      case 'answer':
        return sendText(behaviour.text, behaviour.delayMs, behaviour.usage);
      case 'stream':
        return sendStream(behaviour.chunks, behaviour.delayMs ?? 0, behaviour.done !== false, behaviour.usage);
      case 'sse':
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const data of behaviour.data) {
          if (!alive()) return;
          response.write(`data: ${data}\n\n`);
          await wait(behaviour.delayMs ?? 0);
        }
        if (alive()) response.end();
        return;
      case 'stall':
        return; // the client's abort or timeout closes the socket
      case 'status': {
        const headers: Record<string, string> = {};
        if (behaviour.retryAfter !== undefined) headers['retry-after'] = behaviour.retryAfter;
        if (behaviour.retryAfterMs !== undefined) headers['retry-after-ms'] = behaviour.retryAfterMs;
        response.writeHead(behaviour.status, { 'content-type': 'application/json', ...headers });
        response.end(behaviour.body ?? JSON.stringify({ error: { message: `scripted ${behaviour.status}` } }));
        return;
      }
      case 'malformed':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(behaviour.body ?? '{"choices": [ {"message": ');
        return;
      case 'json':
        await wait(behaviour.delayMs ?? 0);
        return sendJson(200, behaviour.body);
      case 'embeddings':
        await wait(behaviour.delayMs ?? 0);
        return sendJson(200, { ...embeddings(body.input, behaviour.dimensions ?? body.dimensions ?? 4, behaviour.reverse ?? false), ...(behaviour.usage ? { usage: behaviour.usage } : {}) });
      case 'auto':
        if (route === 'embeddings') return sendJson(200, embeddings(body.input, body.dimensions ?? 4, false));
        return sendText(autoAnswer(body.messages));
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    get inFlight() {
      return inFlight;
    },
    enqueue(route, ...behaviours) {
      queues[route].push(...behaviours);
    },
    waitForRequests(count) {
      return waitUntil(() => requests.filter((request) => request.body !== undefined).length >= count);
    },
    waitForClientClose(index) {
      return waitUntil(() => requests[index]?.closedByClient === true);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', () => resolve(''));
  });
}

const wait = (ms: number) => (ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve());

function completion(text: string, usage?: ChatUsage) {
  return {
    id: 'chatcmpl-scripted',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    ...(usage ? { usage } : {}),
  };
}

/** Words with their following space, so the chunks concatenate back to `text`. */
function splitWords(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** Deterministic: cites `[1]` when the prompt lists numbered items, else echoes the request's size. */
function autoAnswer(messages: { content?: unknown }[] | undefined): string {
  const prompt = (messages ?? []).map((message) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content))).join('\n');
  return /^\[1\]/m.test(prompt) ? 'From what I remember, the answer is in item [1].' : `Scripted answer to ${messages?.length ?? 0} message(s).`;
}

function embeddings(input: unknown, dimensions: number, reverse: boolean) {
  const texts = Array.isArray(input) ? input.map(String) : [String(input ?? '')];
  const data = texts.map((text, index) => ({ object: 'embedding', index, embedding: scriptedVector(text, dimensions) }));
  if (reverse) data.reverse();
  return { object: 'list', data, model: 'scripted' };
}

/** The vector the server returns for `text`: tests compare against it to check ordering. */
export function scriptedVector(text: string, dimensions: number): number[] {
  let hash = 2166136261;
  for (const char of text) hash = Math.imul(hash ^ (char.codePointAt(0) ?? 0), 16777619) >>> 0;
  return Array.from({ length: dimensions }, (_, index) => ((hash >>> (index % 24)) % 1000) / 1000 + index);
}
