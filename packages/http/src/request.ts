/**
 * The one request type: what a bridge (node:http, Web fetch) hands to the shared core. No sockets;
 * the body is read on demand, as bytes, by the core's one capped reader (JSON) or multipart parser.
 */
export type ApiRequest = {
  method: string;
  /** The path as the bridge received it, below any prefix a framework stripped (`mountedAt`). */
  pathname: string;
  /** A prefix a framework already stripped from the path (Express `req.baseUrl`), '' when none. */
  mountedAt: string;
  query: Record<string, string>;
  /** Lower-cased header names. */
  headers: Record<string, string | undefined>;
  body: RequestBody;
  /** The request's signal, which aborts when the client goes away (a bridge may make it on first use). */
  abortSignal: () => AbortSignal;
};

/** A request body as the core reads it; the one place a bridge differs in reading. */
export type RequestBody = {
  /** The request announced or carries a body (Content-Length > 0, Transfer-Encoding, a Web body). */
  hasBody: boolean;
  /**
   * The body's bytes as they arrive, read once; null when there are none. Throws 400
   * `invalid_request` saying what to change when something read the body before the handler.
   * Leaving the iteration early does not destroy the connection (see `discard`).
   */
  chunks(purpose: 'json' | 'upload'): AsyncIterable<Uint8Array> | null;
  /**
   * A body something read before the handler: the JSON value middleware left (node: `req.body`
   * after `express.json()`), or a 400 saying what to change when nothing usable is left (thrown).
   * Null when the body is unread, for the core to read.
   */
  alreadyRead(limit: number): { value: unknown } | null;
  /**
   * Drops what is left of a refused body (413, 401, 400 ...) so that a client still sending reads
   * the answer instead of a reset connection. Safe to call more than once.
   */
  discard(): void;
};
