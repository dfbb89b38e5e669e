import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, HTTP_ERROR_CODES } from './codes.js';
import { hasShared, sharedPath } from '../__fixtures__/shared-data.js';
import { ServiceError, isServiceError } from './service-error.js';

const SPEC = sharedPath('spec/memory-agent-service.md');
const HAS_SPEC = hasShared('spec/memory-agent-service.md', 'the error table against the spec');
/** The project's own API reference, which carries the same table. */
const API_DOC = new URL('../../../../docs/api.md', import.meta.url);

/** Rows of a "### Codes" table (the spec's, or docs/api.md's): code -> statuses. */
function specCodes(file: string | URL = SPEC, from = '### Codes\n', to = '### Rate-limit headers'): Map<string, number[]> {
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf(from);
  const section = text.slice(start, text.indexOf(to, start));
  const rows = new Map<string, number[]>();
  for (const match of section.matchAll(/^\| `([a-z_]+)` \| ([^|]+) \|/gm)) {
    if (match[1] === 'code') continue; // the header row
    rows.set(match[1]!, [...match[2]!.matchAll(/\d{3}/g)].map(([n]) => Number(n)));
  }
  return rows;
}

describe('error codes', () => {
  it.skipIf(!HAS_SPEC)('match the spec Codes table exactly, code for code and status for status', () => {
    const spec = specCodes();
    expect(spec.size).toBeGreaterThan(30);
    expect(Object.keys(ERROR_CODES).sort()).toEqual([...spec.keys()].sort());
    for (const [code, statuses] of spec) expect(statuses, code).toContain(ERROR_CODES[code as keyof typeof ERROR_CODES].status);
  });

  it("match the project's API reference (docs/api.md) code for code and status for status", () => {
    const documented = specCodes(API_DOC);
    expect(documented.size).toBeGreaterThan(30);
    expect(Object.keys(ERROR_CODES).sort()).toEqual([...documented.keys()].sort());
    for (const [code, statuses] of documented) expect(statuses, code).toContain(ERROR_CODES[code as keyof typeof ERROR_CODES].status);
  });

  it("outside the spec's table are documented in docs/api.md, each on a status the spec's table does not use", () => {
    const documented = specCodes(API_DOC, "### Codes outside the spec's table", '\n## ');
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(Object.entries(HTTP_ERROR_CODES).map(([code, { status }]) => [code, [status]])));
    const specStatuses = new Set([...specCodes(API_DOC).values()].flat());
    for (const [code, { status }] of Object.entries(HTTP_ERROR_CODES)) {
      expect({ code, inSpecTable: code in ERROR_CODES, statusInSpecTable: specStatuses.has(status) }).toEqual({ code, inSpecTable: false, statusInSpecTable: false });
    }
  });

  it('let only invalid_request take 422', () => {
    expect(new ServiceError('invalid_request', 'x', { status: 422 }).status).toBe(422);
    expect(new ServiceError('conflict', 'x', { status: 422 }).status).toBe(409);
  });

  it('serialize to the spec body without request_id', () => {
    expect(new ServiceError('rate_limit_exceeded', 'slow down', { details: 'user', retryAfter: 1 }).toJSON()).toEqual({
      error: 'slow down',
      code: 'rate_limit_exceeded',
      details: 'user',
    });
    expect(new ServiceError('not_found').toJSON()).toEqual({ error: 'Not found.', code: 'not_found' });
  });

  it('are recognised across copies by their marker', () => {
    expect(isServiceError(new ServiceError('conflict'))).toBe(true);
    expect(isServiceError({ [Symbol.for('memory-agents.error')]: true })).toBe(true);
    expect(isServiceError(new Error('x'))).toBe(false);
    expect(isServiceError(null)).toBe(false);
  });
});
