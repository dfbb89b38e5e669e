// Calls to the server's own /v1 API with the key the person signed in with. The key lives in this
// tab's session storage only (gone when the tab closes; never in local storage, a cookie or a URL).

const KEY = 'memory-agents.inspector.key';

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  signIn: (key: string): void => sessionStorage.setItem(KEY, key),
  signOut: (): void => sessionStorage.removeItem(KEY),
};

/** A refusal or failure of the API, with its code and sentence as the server gave them. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Raised once a key is refused (401): the app signs out and says why. */
export class KeyRefused extends ApiError {}

export async function api<T = any>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, key = session.key()): Promise<T> {
  if (key === null) throw new KeyRefused(401, 'unauthorized', 'Sign in with an API key.');
  // The inspector's door to /v1 (the spec refuses a key from a browser on /v1 itself).
  const response = await fetch(`/inspect/api${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    cache: 'no-store',
    credentials: 'omit',
    referrerPolicy: 'no-referrer',
  });
  const text = await response.text();
  const parsed = text === '' ? null : safeJson(text);
  if (!response.ok) {
    const code = typeof parsed?.code === 'string' ? parsed.code : 'error';
    const message = typeof parsed?.error === 'string' ? parsed.error : `The server answered ${response.status}.`;
    if (response.status === 401) throw new KeyRefused(401, code, message);
    throw new ApiError(response.status, code, message);
  }
  return parsed as T;
}

function safeJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** `?a=1&b=2` from the defined, non-empty values. */
export function query(values: Record<string, string | number | boolean | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

export const enc = encodeURIComponent;
