import type { Client } from '../support/client.js';

/** Paths under one thread. */
export function threadPaths(agentId: string, threadId: string) {
  const thread = `/v1/agents/${agentId}/threads/${threadId}`;
  return {
    thread,
    observe: `${thread}/observe`,
    status: (observationId: string) => `${thread}/observe/${observationId}/status`,
    learning: `${thread}/learning`,
    chat: `${thread}/chat`,
    stream: `${thread}/chat/stream`,
    respond: `${thread}/observe-and-respond`,
    enrich: `${thread}/observe-and-enrich`,
  };
}

/** One observation holding `text` (one block). */
export const said = (text: string, extra: Record<string, unknown> = {}) => ({ content: [{ type: 'text', text }], ...extra });

const FINAL = new Set(['committed', 'failed', 'cancelled']);

/**
 * Polls the observation status until `done` holds (default: a final status). Bounded by `tries`
 * (20 ms apart), never by a wall-clock assertion.
 */
export async function pollStatus(
  api: Client,
  path: string,
  done: (status: any) => boolean = (status) => FINAL.has(status.status),
  options: { tries?: number; headers?: Record<string, string>; explain?: () => string } = {},
): Promise<any> {
  const tries = options.tries ?? 3_000;
  for (let attempt = 0; attempt < tries; attempt++) {
    const response = await api.get(path, options.headers ? { headers: options.headers } : {});
    if (response.status !== 200) throw new Error(`status ${path}: ${response.status} ${response.text}`);
    if (done(response.body)) return response.body;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const last = await api.get(path, options.headers ? { headers: options.headers } : {}).catch((error: Error) => ({ text: String(error) }));
  throw new Error(`gave up polling ${path}; last status: ${last.text}${options.explain ? `\n${options.explain()}` : ''}`);
}

/**
 * Waits for a job resumed by a restarted server to end: generously bounded (on a loaded CI machine
 * resuming slows down rather than fails the test), and a job that never ends fails with its last
 * status and what the servers printed.
 */
export function pollResumed(api: Client, path: string, servers: { output(): string }[]): Promise<any> {
  return pollStatus(api, path, undefined, { tries: 20_000, explain: () => servers.map((server, i) => `server ${i + 1} output:\n${server.output()}`).join('\n') });
}

/** Sends an observe, expects 202 and waits until the job is final; resolves the final status. */
export async function observeAndSettle(api: Client, agentId: string, threadId: string, observations: unknown[], headers?: Record<string, string>) {
  const paths = threadPaths(agentId, threadId);
  const accepted = await api.post(paths.observe, { observations }, headers ? { headers } : {});
  if (accepted.status !== 202) throw new Error(`observe: ${accepted.status} ${accepted.text}`);
  return pollStatus(api, paths.status(accepted.body.observation_id), undefined, headers ? { headers } : {});
}

/** Creates a thread (201) and resolves its id. */
export async function newThread(api: Client, agentId: string, headers?: Record<string, string>): Promise<string> {
  const created = await api.post(`/v1/agents/${agentId}/threads`, {}, headers ? { headers } : {});
  if (created.status !== 201) throw new Error(`thread create: ${created.status} ${created.text}`);
  return created.body.thread_id;
}

/** A chat body with a fresh turn id. */
let turn = 0;
export const ask = (message: string, extra: Record<string, unknown> = {}) => ({ turn_id: `t${++turn}`, message, ...extra });

/** Deterministic filler text of exactly `length` characters made of words. */
export function filler(length: number, seed = 0): string {
  const words = ['amber', 'basalt', 'cobalt', 'dune', 'ember', 'fjord', 'granite', 'harbor', 'indigo', 'juniper', 'kelp', 'lagoon', 'meadow', 'nectar', 'obsidian', 'prairie'];
  let text = '';
  let i = seed;
  while (text.length < length) {
    text += `${words[i % words.length]}${i % 7 === 6 ? '. ' : ' '}`;
    i = (i * 7 + 3) % 1009;
  }
  return text.slice(0, length);
}

/** Parses a `text/event-stream` body into events (comments included as `comment`). */
export function parseSse(text: string): { event: string; data: any }[] {
  const events: { event: string; data: any }[] = [];
  for (const block of text.split('\n\n')) {
    if (block.trim() === '') continue;
    if (block.startsWith(':')) {
      events.push({ event: 'comment', data: block.slice(1).trim() });
      continue;
    }
    let event = 'message';
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    events.push({ event, data: data === '' ? null : JSON.parse(data) });
  }
  return events;
}

let people = 0;
/**
 * The same client acting for a fresh person (`X-SP-End-User`), so each test spends its own
 * per-subject rate windows. Threads it creates are reachable by it and by the organization.
 */
export function asPerson(api: Client, name = `person-${process.pid}-${++people}`): Client {
  const headers = { 'x-sp-end-user': name };
  const merged = (options?: Parameters<Client['call']>[2]) => ({ ...options, headers: { ...headers, ...options?.headers } });
  return {
    call: (method, path, options) => api.call(method, path, merged(options)),
    get: (path, options) => api.get(path, merged(options)),
    post: (path, body, options) => api.post(path, body, merged(options)),
    patch: (path, body, options) => api.patch(path, body, merged(options)),
    delete: (path, options) => api.delete(path, merged(options)),
  };
}
