import { ServiceError, isServiceError } from '../errors/service-error.js';
import type { Store, StoreAreas } from '../ports/store/index.js';

const MARKER = Symbol.for('memory-agents.store-unavailable');

/**
 * Thrown by a store adapter (or any adapter behind a port) when its backend did not respond or
 * refused to work for a reason outside the request: a lost or refused connection, a timeout, a
 * full or read-only disk. The service answers it 503 `service_unavailable`; anything else an
 * adapter throws is treated as a defect (500). Adapters on node-postgres or PGlite need not throw
 * it: their connection errors are recognized by {@link isUnavailableError}.
 *
 * @example
 * throw new StoreUnavailableError('the key-value backend did not answer within 5 s', { cause: error });
 */
export class StoreUnavailableError extends Error {
  readonly [MARKER] = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** PostgreSQL SQLSTATEs (and classes) that mean the database, not the request, failed. */
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0[1-3]|57014|25P03|58030|XX001)/;
/** Node's errno codes of a connection or storage that went away. */
const UNAVAILABLE_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENOSPC',
  'EDQUOT',
  'EROFS',
  'EIO',
]);
/** Messages of node-postgres, pg-pool and PGlite for a connection that is gone or never came. */
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end|PGlite is closed|database is closed|No space left on device|read-only file system/i;

/**
 * True when `error` (or one of its causes) says a backend did not respond rather than that the
 * request or the code is wrong: a {@link StoreUnavailableError}; a PostgreSQL error of class 08
 * (connection exception), 53 (insufficient resources, e.g. disk full), 57P01-57P03 (shutdown,
 * cannot connect now), 57014 (statement timeout) or 25P03 (idle-in-transaction timeout); a Node
 * connection or storage errno (ECONNREFUSED, ECONNRESET, ETIMEDOUT, ENOSPC, EROFS...); or
 * node-postgres' own "Connection terminated", connection and query timeouts.
 */
export function isUnavailableError(error: unknown): boolean {
  for (let current = error, depth = 0; current !== null && current !== undefined && depth < 8; depth++) {
    if (typeof current !== 'object') return false;
    const value = current as { code?: unknown; errno?: unknown; message?: unknown; cause?: unknown; [MARKER]?: unknown };
    if (value[MARKER] === true) return true;
    if (typeof value.code === 'string' && (UNAVAILABLE_ERRNO.has(value.code) || (/^[0-9A-Z]{5}$/.test(value.code) && UNAVAILABLE_SQLSTATE.test(value.code)))) return true;
    if (typeof value.message === 'string' && UNAVAILABLE_MESSAGE.test(value.message)) return true;
    // An AggregateError (a connect to several addresses, all refused) carries its errors in `errors`.
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.some((inner) => isUnavailableError(inner))) return true;
    current = value.cause;
  }
  return false;
}

/**
 * True for a failure that says a dependency is away, which a caller retries later: a
 * `service_unavailable` ServiceError (the store, the memory index or the blob store did not
 * respond) or a raw error {@link isUnavailableError} recognizes. Learning leaves its jobs
 * resumable on these instead of failing their turns.
 */
export function isDependencyUnavailable(error: unknown): boolean {
  if (isServiceError(error)) return error.code === 'service_unavailable';
  return isUnavailableError(error);
}

/** A full disk or read-only storage (PostgreSQL class 53, ENOSPC, EROFS...), not a lost connection. */
function isStorageFull(error: unknown): boolean {
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 8; depth++) {
    const value = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof value.code === 'string' && /^(53|ENOSPC|EDQUOT|EROFS)/.test(value.code)) return true;
    if (typeof value.message === 'string' && /No space left on device|read-only file system|could not extend file/i.test(value.message)) return true;
    current = value.cause;
  }
  return false;
}

/** The message of a {@link StoreUnavailableError} in `error`'s causes, if any. */
function adapterSentence(error: unknown): string | null {
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 8; depth++) {
    if ((current as { [MARKER]?: unknown })[MARKER] === true && current instanceof Error && current.message) return current.message;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** The sentence of a 503 for a store area: which part did not respond, and why when known. */
function sentence(storeId: string, part: string, error: unknown): string {
  // An adapter's own sentence (e.g. the embedded database whose storage failed) says it best.
  const own = adapterSentence(error);
  if (own) return `The database (store ${storeId}) could not be used while working on ${part}. ${own}`;
  if (isStorageFull(error)) {
    return `The database (store ${storeId}) could not write while working on ${part}: its storage is full or read-only. Nothing of this request was stored past that point; retry once space is freed.`;
  }
  return `The database (store ${storeId}) did not respond while working on ${part}; nothing of this request was done past that point. Retry in a few seconds.`;
}

/**
 * The store with every backend failure that {@link isUnavailableError} recognizes turned into a
 * 503 `service_unavailable` ServiceError naming the part that did not respond; other errors (a
 * defect: 500) and ServiceErrors pass through unchanged. Generic over whatever areas and methods
 * the store has: every object-valued property is an area whose methods are wrapped, and
 * `transaction` hands `fn` the wrapped areas of the transaction. `createMemoryService` applies it
 * to every store, so each route, the MCP transport, learning and the rate limiter see the same
 * error.
 */
export function availableStore(store: Store): Store {
  const id = store.id;
  const map = (part: string) => (error: unknown) => {
    if (isServiceError(error) || !isUnavailableError(error)) throw error;
    throw new ServiceError('service_unavailable', sentence(id, part, error), { cause: error });
  };
  const areaCache = new WeakMap<object, object>();
  const wrapArea = (area: object, name: string): object => {
    const known = areaCache.get(area);
    if (known) return known;
    const onError = map(name === 'rateLimits' ? 'the rate limit windows' : `its ${name}`);
    const wrapped = new Proxy(area, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          let result: unknown;
          try {
            result = (value as (...a: unknown[]) => unknown).apply(target, args);
          } catch (error) {
            onError(error);
          }
          return result instanceof Promise ? result.catch(onError) : result;
        };
      },
    });
    areaCache.set(area, wrapped);
    return wrapped;
  };
  const wrapAreas = <T extends object>(areas: T): T =>
    new Proxy(areas, {
      get(target, property, receiver) {
        if (property === 'transaction') {
          return <R>(fn: (tx: StoreAreas) => Promise<R>) =>
            (target as unknown as Store).transaction((tx) => fn(wrapAreas(tx))).catch(map('a transaction'));
        }
        if (property === 'init' || property === 'close') {
          const method = Reflect.get(target, property, receiver) as () => Promise<void>;
          return () => method.call(target).catch(map(property === 'init' ? 'opening it' : 'closing it'));
        }
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'object' && value !== null && typeof property === 'string' ? wrapArea(value, property) : value;
      },
    });
  return wrapAreas(store);
}
