import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './provider-client.js';

describe('parseRetryAfter', () => {
  it('reads retry-after-ms, Retry-After seconds and Retry-After dates', () => {
    const now = Date.parse('2024-05-04T10:00:00Z');
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250);
    expect(parseRetryAfter(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Sat, 04 May 2024 10:00:05 GMT' }), now)).toBe(5000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeNull();
    expect(parseRetryAfter(new Headers(), now)).toBeNull();
  });
});
