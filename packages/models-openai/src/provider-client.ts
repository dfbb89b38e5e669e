import { LanguageModelError } from '@memory-agents/core/adapter';
import type { LimitFunction } from 'p-limit';
import { abortError, sleep } from './abort.js';
import { acquireSlot } from './concurrency.js';

/** Reported to `onRetry` before the adapter waits and sends a request again. */
export type RetryEvent = {
  /** 1 for the first retry. */
  retry: number;
  /** How long the adapter waits before it (the provider's `Retry-After` when it sent one). */
  delayMs: number;
  /** HTTP status of the failed attempt; null for a network error. */
  status: number | null;
  /** Whether `delayMs` came from the provider's `Retry-After` / `retry-after-ms` header. */
  fromRetryAfter: boolean;
};

export type ProviderClientOptions = {
  baseURL: string;
  apiKey?: string | undefined;
  headers?: Record<string, string> | undefined;
  timeoutMs: number;
  maxRetries: number;
  retryBaseDelayMs: number;
  maxRetryDelayMs: number;
  /** The adapter's one p-limit: every attempt holds a slot until its response is read. */
  concurrency: LimitFunction;
  /** What the adapter was doing, for error messages: `chat completion`, `embedding`. */
  operation: string;
  onRetry?: ((event: RetryEvent) => void) | undefined;
};

/** A response whose status was 2xx, still holding its concurrency slot and its timer. */
export type OpenResponse = {
  response: Response;
  /** Restarts the per-call timer: streams use it as an idle timeout between chunks. */
  touch(): void;
  /** Maps an error thrown while reading the body to `AbortError` / `LanguageModelError`. */
  mapReadError(error: unknown): Error;
  /** Aborts the request if still open and frees the concurrency slot. Idempotent. */
  close(): void;
};

type Failure = { retryable: boolean; status: number | null; message: string; retryAfterMs: number | null; cause?: unknown };

const RETRYABLE_STATUS = new Set([408, 409, 425, 429, 500, 502, 503, 504]);
const isRetryableStatus = (status: number) => RETRYABLE_STATUS.has(status) || status >= 500;

/**
 * The HTTP plumbing shared by the chat model and the embedder: one POST with retries (jittered
 * exponential backoff, the provider's `Retry-After` honoured), a per-attempt timeout, caller abort,
 * and a concurrency slot held for as long as the request is open.
 *
 * The API key goes only into the `Authorization` header. Messages carry the status and the
 * provider's own error text with the key redacted, never request headers.
 */
export function createProviderClient(options: ProviderClientOptions) {
  const url = (path: string) => `${options.baseURL.replace(/\/+$/, '')}${path}`;
  const redact = (text: string) => (options.apiKey ? text.split(options.apiKey).join('[redacted]') : text);

  const headers = (): Record<string, string> => ({
    ...options.headers,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
  });

  /** One attempt's controller: aborted by the caller's signal or by the timer. */
  const startAttempt = (signal: AbortSignal | undefined) => {
    const controller = new AbortController();
    let timedOut = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    /** Runs once the attempt is cut short (caller abort or timeout): an open stream frees its slot. */
    let onEnd: () => void = () => undefined;
    const onAbort = () => {
      controller.abort(signal?.reason);
      onEnd();
    };
    const touch = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
        onEnd();
      }, options.timeoutMs);
    };
    // The signal may have aborted while this call waited for its slot.
    if (signal?.aborted) controller.abort(signal.reason);
    else signal?.addEventListener('abort', onAbort, { once: true });
    touch();
    return {
      controller,
      touch,
      get timedOut() {
        return timedOut;
      },
      set onEnd(callback: () => void) {
        onEnd = callback;
      },
      dispose() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      },
    };
  };

  const timeoutError = () =>
    new LanguageModelError('timeout', `${options.operation} timed out after ${options.timeoutMs} ms`);

  /**
   * Sends `body` to `path` until it gets a 2xx, a non-retryable answer, or runs out of retries.
   * The 2xx response is returned open (slot held); the caller reads it and calls `close()`.
   */
  async function open(path: string, body: unknown, signal: AbortSignal | undefined): Promise<OpenResponse> {
    const payload = JSON.stringify(body);
    for (let attempt = 0; ; attempt += 1) {
      if (signal?.aborted) throw abortError(signal);
      const release = await acquireSlot(options.concurrency, signal);
      const handle = startAttempt(signal);
      let failure: Failure;
      try {
        const response = await fetch(url(path), { method: 'POST', headers: headers(), body: payload, signal: handle.controller.signal });
        if (response.ok) {
          let closed = false;
          const close = () => {
            if (closed) return;
            closed = true;
            handle.dispose();
            // Aborting a finished request is a no-op; for an unfinished stream it closes the connection.
            handle.controller.abort();
            release();
          };
          // A stream its reader abandoned still frees its slot when the caller aborts or it times out.
          handle.onEnd = close;
          return {
            response,
            touch: () => {
              if (!closed) handle.touch();
            },
            mapReadError(error) {
              if (error instanceof LanguageModelError) return error;
              if (signal?.aborted) return abortError(signal);
              if (handle.timedOut) return timeoutError();
              return new LanguageModelError('unavailable', `${options.operation} stream broke off: ${describeNetworkError(error)}`, { cause: error });
            },
            close,
          };
        }
        const text = await response.text();
        handle.dispose();
        release();
        failure = {
          retryable: isRetryableStatus(response.status),
          status: response.status,
          message: `provider answered HTTP ${response.status}${providerMessage(text, redact)}`,
          retryAfterMs: parseRetryAfter(response.headers),
        };
      } catch (error) {
        handle.dispose();
        release();
        if (signal?.aborted) throw abortError(signal);
        // A stalled provider is reported at once: retrying would hold the caller (maxRetries+1) x timeoutMs.
        if (handle.timedOut) throw timeoutError();
        failure = { retryable: true, status: null, message: `could not reach the provider (${describeNetworkError(error)})`, retryAfterMs: null, cause: error };
      }

      if (!failure.retryable) {
        throw new LanguageModelError('failed', `${options.operation} failed: ${failure.message}`);
      }
      const gaveUp = (why: string) =>
        new LanguageModelError('unavailable', `${options.operation} unavailable ${why}: ${failure.message}`, failure.cause === undefined ? undefined : { cause: failure.cause });
      if (attempt >= options.maxRetries) throw gaveUp(`after ${attempt + 1} attempt(s)`);
      const fromRetryAfter = failure.retryAfterMs !== null;
      const delayMs = fromRetryAfter ? (failure.retryAfterMs as number) : backoff(attempt, options.retryBaseDelayMs, options.maxRetryDelayMs);
      if (delayMs > options.maxRetryDelayMs) throw gaveUp(`(asked to retry after ${Math.ceil(delayMs / 1000)} s)`);
      options.onRetry?.({ retry: attempt + 1, delayMs, status: failure.status, fromRetryAfter });
      await sleep(delayMs, signal);
    }
  }

  /** POSTs and returns the parsed JSON body; a body that is not JSON rejects with `failed`. */
  async function postJson(path: string, body: unknown, signal: AbortSignal | undefined): Promise<unknown> {
    const opened = await open(path, body, signal);
    let text: string;
    try {
      text = await opened.response.text();
    } catch (error) {
      throw opened.mapReadError(error);
    } finally {
      opened.close();
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new LanguageModelError('failed', `${options.operation} failed: the provider's response is not JSON`);
    }
  }

  return { open, postJson };
}

export type ProviderClient = ReturnType<typeof createProviderClient>;

/** Full jitter between half and all of `base * 2^attempt`, capped. */
function backoff(attempt: number, baseMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** attempt);
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

/** `retry-after-ms` (OpenAI), else `Retry-After` in seconds or as an HTTP date. */
export function parseRetryAfter(headers: Headers, now = Date.now()): number | null {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

function providerMessage(text: string, redact: (text: string) => string): string {
  let message = text;
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
    const error = parsed.error;
    if (typeof error === 'string') message = error;
    else if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') message = (error as { message: string }).message;
    else if (typeof parsed.message === 'string') message = parsed.message;
  } catch {
    // not JSON: keep the raw text
  }
  message = redact(message.replace(/\s+/g, ' ').trim()).slice(0, 300);
  return message ? `: ${message}` : '';
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return 'network error';
  const cause = error.cause;
  const code = cause && typeof cause === 'object' && 'code' in cause ? String((cause as { code: unknown }).code) : null;
  return code ?? error.message;
}
