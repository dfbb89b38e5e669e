import { describe, expect, it } from 'vitest';
import { ServiceError } from '../errors/index.js';
import { describeError } from './logger.js';

describe('describeError', () => {
  it('names the causes a wrapped driver failure carries, not only the wrapper', () => {
    const driver = new Error("Table 'memories' exists but could not be loaded");
    const wrapped = new ServiceError('service_unavailable', 'The memory index (lancedb) failed during init.', { cause: driver });
    expect(describeError(wrapped)).toBe(
      "ServiceError: The memory index (lancedb) failed during init.; caused by: Error: Table 'memories' exists but could not be loaded",
    );
  });

  it('takes anything thrown, stops at four causes and at 2,000 characters', () => {
    expect(describeError('a string')).toBe('a string');
    expect(describeError(undefined)).toBe('undefined');
    let chain: Error = new Error('root');
    for (let i = 0; i < 6; i++) chain = new Error(`level ${i}`, { cause: chain });
    expect(describeError(chain).split('; caused by: ')).toHaveLength(4);
    const long = describeError(new Error('x'.repeat(5000)));
    expect(long).toHaveLength(2001);
    expect(long.endsWith('…')).toBe(true);
  });
});
