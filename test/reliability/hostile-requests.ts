import fc from 'fast-check';
import { ROUTES, type Route } from '@memory-agents/http';

/**
 * Hostile requests for every route of the route table, and the check every answer must pass:
 * never a 5xx, every error in the spec's shape `{ error, code, request_id }`. Shared by the fuzz
 * test (a few hundred requests) and `bench/reliability-fuzz.ts` (10,000 and more).
 */

/** `value` with every unpaired surrogate replaced by U+FFFD (what fetch would send anyway). */
const wellFormed = (value: string) => value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

/** Where the requests go: a running server, its key, and the ids of a ready agent and thread. */
export type FuzzTarget = { url: string; key: string; agentId: string; threadId: string };

/** One generated request, in a form that prints well when a check fails. */
export type HostileRequest = {
  route: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** JSON text or raw text; absent for no body. */
  body?: string;
  /** A multipart form instead of `body` (upload routes). */
  form?: { filename: string; file: string; fields: Record<string, string> };
};

export type FuzzOutcome = { request: HostileRequest; status: number; problem: string | null };

const HUGE = 'x'.repeat(100_000);
const HUGE_NUL = `${'y'.repeat(50_000)}\u0000${'y'.repeat(50_000)}`;

/** Strings chosen to break storage, parsing and length checks. */
const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\uD800',
    'x\uDFFF',
    '\uDE00\uD83D',
    '\uD83D\uDE00 ok',
    '\u202Eevil\u202C',
    '\u200F\u05E9\u05DC\u05D5\u05DD',
    '\uFEFFbom',
    '\r\n\t',
    '%00',
    '%ED%A0%80',
    '../../etc/passwd',
    "'; DROP TABLE agents; --",
    '{"a":1}',
    'null',
    'e\u0301'.repeat(100),
    HUGE,
    HUGE_NUL,
    'a'.repeat(201),
    'a'.repeat(2001),
    `agent_${'0'.repeat(26)}`,
    `thread_${'Z'.repeat(26)}`,
    `obs_${'1'.repeat(26)}`,
    `src_${'a'.repeat(32)}`,
    `img_${'b'.repeat(32)}`,
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 40 }),
);

/** Numbers at the edges of every range the API has. */
const edgeNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, -1, 1, 99, 100, 199, 200, 201, 1999, 2000, 4000, 4001, 100_000, 100_001, 2 ** 31, 2 ** 53 + 2, -(2 ** 63), 1e308, -1e308, 5e-324, 1.5),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Any JSON value, hostile strings and edge numbers included, a few levels deep. */
const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileText,
    edgeNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(hostileText, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** A body of the right shape for the route, so validation gets past the outer layers. */
function template(route: Route, text: () => string, value: () => unknown, number: () => number): Record<string, unknown> {
  const config = () => ({ role: text(), objective: text(), metadata: { [text()]: value() } });
  const chat = () => ({ turn_id: text(), message: text(), answer_length: text(), max_context_chars: number(), images: [text()] });
  switch (route.operationId) {
    case 'createAgent':
    case 'updateAgent':
      return { agent_config: config() };
    case 'createThread':
      return { title: text(), metadata: { [text()]: value(), nested: { [text()]: [value()] } } };
    case 'observe':
      return { observations: [{ content: [{ type: 'text', text: text() }], speaker: text(), tags: [text()], timestamp: text() }] };
    case 'observeAndEnrich':
      return { turn_id: text(), message: text(), max_context_chars: number() };
    case 'finishLearning':
      return { here: value(), max_chars: number(), overlap_chars: number(), strategy: text() };
    default:
      return chat();
  }
}

/** Sets `replacement` at a random leaf path (chosen by `pick`) of `target`. */
function mutate(target: unknown, replacement: unknown, pick: number): unknown {
  if (target === null || typeof target !== 'object') return replacement;
  const keys = Object.keys(target);
  if (keys.length === 0 || pick % 5 === 0) return replacement;
  const key = keys[pick % keys.length]!;
  const copy: Record<string, unknown> = Array.isArray(target) ? ([...target] as unknown as Record<string, unknown>) : { ...target };
  copy[key] = mutate((target as Record<string, unknown>)[key], replacement, Math.floor(pick / 7));
  return copy;
}

/** Raw bodies JSON.stringify cannot produce. */
const rawBodies: fc.Arbitrary<string> = fc.constantFrom(
  '{"turn_id":"a","turn_id":"\\u0000","message":"m","message":"\\ud800"}',
  '{"agent_config":{"role":"r","role":"\\u0000","objective":"o"}}',
  '{"observations":[{"content":[{"type":"text","text":"\\u0000"}]}]}',
  '{"title":"\\udfff","metadata":{"\\u0000":"\\ud800"}}',
  `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`,
  `{"metadata":${'{"a":'.repeat(200)}1${'}'.repeat(200)}}`,
  '{"observations":',
  '\uFEFF{"observations":[]}',
  'not json at all',
  '1e400',
  '"just a string"',
  '[]',
  '{}',
  'null',
  '',
);

/** Encodes a path segment; lone surrogates become their (invalid) CESU-8 bytes. */
function encodeSegment(value: string): string {
  let encoded = '';
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) encoded += `%ED%${(0xa0 + ((code >> 6) & 0x1f)).toString(16).toUpperCase()}%${(0x80 + (code & 0x3f)).toString(16).toUpperCase()}`;
    else encoded += encodeURIComponent(char);
  }
  return encoded;
}

/** A header value fetch will send (latin-1, no control characters); hostile within those bounds. */
const headerSafe = (value: string) => value.replace(/[^\x20-\x7e\xa0-\xff]/g, '?').slice(0, 300);

const contentTypes = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/problem+json', '');

/** One hostile request for any route of the table (and now and then a path or method it lacks). */
export function hostileRequest(target: FuzzTarget): fc.Arbitrary<HostileRequest> {
  return fc
    .record({
      route: fc.constantFrom(...ROUTES),
      params: fc.array(fc.oneof(hostileText, fc.constant('')), { minLength: 4, maxLength: 4 }),
      useReal: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 4, maxLength: 4 }),
      texts: fc.array(hostileText, { minLength: 12, maxLength: 12 }),
      values: fc.array(hostileValue, { minLength: 4, maxLength: 4 }),
      numbers: fc.array(edgeNumber, { minLength: 4, maxLength: 4 }),
      mutation: fc.oneof(fc.constant<'none'>('none'), fc.constant<'leaf'>('leaf'), fc.constant<'whole'>('whole'), fc.constant<'raw'>('raw')),
      pick: fc.nat(),
      replacement: hostileValue,
      raw: rawBodies,
      contentType: contentTypes,
      query: fc.dictionary(fc.constantFrom('limit', 'cursor', 'x', '\u0000'), fc.oneof(hostileText, edgeNumber.map(String)), { maxKeys: 2 }),
      endUser: fc.option(hostileText, { nil: undefined }),
      idempotencyKey: fc.option(hostileText, { nil: undefined }),
      oddity: fc.constantFrom<'none' | 'unknown-path' | 'wrong-method'>('none', 'none', 'none', 'none', 'none', 'none', 'none', 'none', 'unknown-path', 'wrong-method'),
    })
    .map((draw) => {
      let textIndex = 0;
      let valueIndex = 0;
      let numberIndex = 0;
      const text = () => draw.texts[textIndex++ % draw.texts.length]!;
      const value = () => draw.values[valueIndex++ % draw.values.length];
      const number = () => draw.numbers[numberIndex++ % draw.numbers.length]!;
      const { route } = draw;
      // Deletes never reach the real agent and thread, so the run keeps something to work on.
      const real: Record<string, string> = route.method === 'DELETE' ? {} : { agent_id: target.agentId, thread_id: target.threadId };
      let slot = 0;
      let path = route.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
        const index = slot++;
        // Mostly the real ids, so requests get past the lookups to the validation behind them.
        return real[name] !== undefined && draw.useReal[index]! < 8 ? real[name]! : encodeSegment(draw.params[index]!);
      });
      if (draw.oddity === 'unknown-path') path = `${path}/${encodeSegment(text())}`;
      const query = new URLSearchParams(Object.entries(draw.query).map(([k, v]): [string, string] => [k, wellFormed(v)])).toString();
      const headers: Record<string, string> = { authorization: `Bearer ${target.key}` };
      if (draw.endUser !== undefined) headers['x-sp-end-user'] = headerSafe(draw.endUser);
      if (draw.idempotencyKey !== undefined) headers['idempotency-key'] = headerSafe(draw.idempotencyKey);
      const method = draw.oddity === 'wrong-method' ? (route.method === 'GET' ? 'PUT' : 'GET') : route.method;
      const request: HostileRequest = { route: route.operationId, method, path: query === '' ? path : `${path}?${query}`, headers };
      if (method === 'GET') return request;
      if (route.upload) {
        const fields: Record<string, string> = {};
        for (const name of route.upload.fields) if (draw.pick % 3 !== 0) fields[name] = wellFormed(text()).slice(0, 2000);
        request.form = { filename: wellFormed(text()).slice(0, 300), file: draw.mutation === 'none' ? 'A short note about the launch.' : text(), fields };
        return request;
      }
      if (draw.contentType !== '') headers['content-type'] = draw.contentType;
      const base = template(route, text, value, number);
      switch (draw.mutation) {
        case 'none':
          request.body = JSON.stringify(base);
          break;
        case 'leaf':
          request.body = JSON.stringify(mutate(base, draw.replacement, draw.pick));
          break;
        case 'whole':
          request.body = JSON.stringify(draw.replacement) ?? 'null';
          break;
        case 'raw':
          request.body = draw.raw;
          break;
      }
      return request;
    });
}

/**
 * Sends one request and checks the answer: no 5xx, an error carries exactly the spec's fields,
 * and the connection is not dropped. `problem` is null when all hold.
 */
export async function sendAndCheck(target: FuzzTarget, request: HostileRequest, timeoutMs = 30_000): Promise<FuzzOutcome> {
  let body: FormData | string | undefined;
  if (request.form) {
    const form = new FormData();
    form.append('file', new Blob([request.form.file]), request.form.filename);
    for (const [name, value] of Object.entries(request.form.fields)) form.append(name, value);
    body = form;
  } else if (request.body !== undefined) {
    body = request.body;
  }
  let response: Response;
  try {
    response = await fetch(`${target.url}${request.path}`, { method: request.method, headers: request.headers, ...(body === undefined ? {} : { body }), signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return { request, status: 0, problem: `no answer: ${cause?.code ?? (error as Error).message}` };
  }
  const text = await response.text().catch((error: Error) => `<<body failed: ${error.message}>>`);
  if (response.status >= 500) return { request, status: response.status, problem: `5xx: ${text.slice(0, 300)}` };
  if (response.status >= 400) {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return { request, status: response.status, problem: `error body is not JSON: ${text.slice(0, 200)}` };
    }
    const keys = Object.keys(parsed).sort().join(',');
    const shaped =
      typeof parsed.error === 'string' &&
      typeof parsed.code === 'string' &&
      typeof parsed.request_id === 'string' &&
      (keys === 'code,error,request_id' || (keys === 'code,details,error,request_id' && typeof parsed.details === 'string'));
    if (!shaped) return { request, status: response.status, problem: `error body not in the spec's shape: ${text.slice(0, 200)}` };
  }
  return { request, status: response.status, problem: null };
}

/** What a request prints as when a check fails (long strings cut). */
export function describeRequest(request: HostileRequest): string {
  return JSON.stringify(request, (_key, value: unknown) => (typeof value === 'string' && value.length > 200 ? `${value.slice(0, 200)}…(${value.length} chars)` : value));
}
