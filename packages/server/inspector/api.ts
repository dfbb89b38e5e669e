// Calls to the server's own /v1 API with the key the person signed in with, through the typed
// client (@memory-agents/client). The key lives in this tab's session storage only (gone when the
// tab closes; never in local storage, a cookie or a URL).
import { createClient, MemoryAgentsError, type MemoryAgentsClient } from '@memory-agents/client';

const KEY = 'memory-agents.inspector.key';

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  signIn: (key: string): void => sessionStorage.setItem(KEY, key),
  signOut: (): void => sessionStorage.removeItem(KEY),
};

/**
 * A refusal or failure of the API, with its code and sentence as the server gave them: every error
 * the client throws (a `MemoryAgentsError`) is one, and `new ApiError(status, code, message)` is
 * one the inspector raises itself.
 */
export class ApiError extends MemoryAgentsError {
  constructor(status: number, code: string, message: string) {
    super({ status, code, requestId: null, message });
  }

  static [Symbol.hasInstance](value: unknown): value is MemoryAgentsError {
    return MemoryAgentsError.isInstance(value);
  }
}

/** A key refused (any 401): the app signs out and says why. */
export class KeyRefused extends ApiError {
  static override [Symbol.hasInstance](value: unknown): value is MemoryAgentsError & { status: 401 } {
    return MemoryAgentsError.isInstance(value) && value.status === 401;
  }
}

/**
 * The inspector's door to /v1: `/inspect/api/v1/...` (the spec refuses a key from a browser on /v1
 * itself). No cache, no cookie, no referrer; without a key nothing is sent.
 */
const inspectorFetch =
  (key: string | null): typeof fetch =>
  (input, init) =>
    key === null
      ? Promise.reject(new KeyRefused(401, 'unauthorized', 'Sign in with an API key.'))
      : fetch(input, { ...init, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer' });

let last: { key: string | null; client: MemoryAgentsClient } | undefined;

/** The typed client of the API with `key` (the signed-in one unless given): `await api().agents.get({ agentId })`. */
export function api(key = session.key()): MemoryAgentsClient {
  if (last === undefined || last.key !== key) {
    // The client needs an absolute base URL (it builds each request's with `new URL`).
    last = { key, client: createClient({ baseUrl: new URL('/inspect/api', location.href).href, apiKey: key ?? '', fetch: inspectorFetch(key) }) };
  }
  return last.client;
}

/** `?a=1&b=2` from the defined, non-empty values. */
export function query(values: Record<string, string | number | boolean | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

export const enc = encodeURIComponent;
