import { describe, expect, it } from 'vitest';
import { expiryOf } from './expiry-phrases.js';

// Said on Monday 2 March 2026 at 10:00 UTC.
const SAID = new Date('2026-03-02T10:00:00Z');

describe('expiryOf', () => {
  it.each([
    ['My trial ends on 3 March.', '2026-03-04T00:00:00.000Z'],
    ['My subscription expires March 21st.', '2026-03-22T00:00:00.000Z'],
    ['The door code is valid until Friday.', '2026-03-07T00:00:00.000Z'],
    ["I'm in Lisbon until the end of the month.", '2026-04-01T00:00:00.000Z'],
    ["I'll be away for the next two weeks.", '2026-03-16T10:00:00.000Z'],
    ["I'm off until Monday, so ping Bob.", '2026-03-10T00:00:00.000Z'],
    ['The parking pass is good through April 30.', '2026-05-01T00:00:00.000Z'],
    ['My booking runs out tomorrow at 6pm.', '2026-03-03T18:00:00.000Z'],
  ])('reads a bound: %s', (text, expected) => {
    expect(expiryOf(text, SAID)).toBe(expected);
  });

  it.each([
    ['We waited until Friday.'],
    ['I worked there for two years.'],
    ['I lived in Porto until 2019.'],
    ['The gym is open until 10pm.'],
    ['Call me until Friday'],
    ['I slept in till 8:30 am on Saturday this past weekend.'],
    ['My trial ended on 1 March.'],
    ['Monday through Friday I run at 7.'],
  ])('reads no bound in a narrative, a past date or a daily hour: %s', (text) => {
    expect(expiryOf(text, SAID)).toBeNull();
  });

  it('takes the latest of several bounds, and none past five years or in a long piece', () => {
    expect(expiryOf('The code is valid until Friday; the pass is valid until 20 March.', SAID)).toBe('2026-03-21T00:00:00.000Z');
    expect(expiryOf('My visa is valid until 2040.', SAID)).toBeNull();
    expect(expiryOf(`I like tea. I run on Sundays. My trial ends on 3 March.`, SAID)).toBeNull();
    expect(expiryOf(`My trial ends on 3 March. ${'x'.repeat(300)}`, SAID)).toBeNull();
    expect(expiryOf('My trial ends on 3 March.', new Date('not a date'))).toBeNull();
  });
});
