import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, RefusedAddressError, type CompiledAddressPolicy } from './url-guard.js';

/** How one attempt ended: the receiver's status, or why there was none. */
export type SendResult = { statusCode: number | null; error: string | null };

/** Bytes of the receiver's answer read at most (the rest is dropped: only the status counts). */
const MAX_RESPONSE_BYTES = 4096;

/**
 * POSTs one delivery. `node:http(s)` rather than `fetch`: its `lookup` option lets the address
 * check run on the address actually connected to (fetch takes no lookup without the `undici`
 * package). Never follows redirects; `AbortSignal.timeout` bounds the whole exchange.
 */
export function sendWebhook({ url, body, headers, timeoutMs, policy }: { url: string; body: string; headers: Record<string, string>; timeoutMs: number; policy: CompiledAddressPolicy }): Promise<SendResult> {
  const target = new URL(url);
  const hostname = target.hostname.replace(/^\[|\]$/g, '');
  // An IP literal is connected to without a lookup: judge it here.
  if (isIP(hostname) && !policy.isAllowedHost(hostname)) {
    const range = policy.refusedRange(hostname);
    if (range) return Promise.resolve({ statusCode: null, error: `${hostname} is a ${range} address, which webhooks may not call.` });
  }
  return new Promise((resolve) => {
    const signal = AbortSignal.timeout(timeoutMs);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
        lookup: guardedLookup(policy, hostname),
        signal,
        agent: false,
      },
      (response) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) response.destroy();
        });
        const done = () => resolve({ statusCode: response.statusCode ?? null, error: null });
        response.on('end', done);
        response.on('close', done);
        response.on('error', done);
      },
    );
    request.on('error', (error) => {
      if (signal.aborted) return resolve({ statusCode: null, error: `The receiver did not answer within ${timeoutMs} ms.` });
      if (error instanceof RefusedAddressError) return resolve({ statusCode: null, error: error.message });
      resolve({ statusCode: null, error: `The request failed: ${(error as NodeJS.ErrnoException).code ?? error.message}.` });
    });
    request.end(body);
  });
}
