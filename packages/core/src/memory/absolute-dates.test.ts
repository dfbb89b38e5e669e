import { describe, expect, it } from 'vitest';
import { resolveAbsoluteDates } from './absolute-dates.js';

const said = new Date('2024-02-10T15:00:00Z');
const dates = (text: string, reference = said) => resolveAbsoluteDates(text, reference).map(({ date, granularity }) => `${date}/${granularity}`);

describe('resolveAbsoluteDates', () => {
  it('reads month-day, day-month and ISO dates, with and without a year', () => {
    expect(dates('I moved to Berlin on March 3rd.')).toEqual(['2024-03-03/day']);
    expect(dates('I moved to Berlin on 3 March 2023.')).toEqual(['2023-03-03/day']);
    expect(dates('Since the 5th of January I work at Acme.')).toEqual(['2024-01-05/day']);
    expect(dates('The lease ends Sept. 30, 2025.')).toEqual(['2025-09-30/day']);
    expect(dates('Delivered 2023-11-02 at noon.')).toEqual(['2023-11-02/day']);
  });

  it('reads a month alone after a preposition, or with a year', () => {
    expect(dates('I started at Acme in March.')).toEqual(['2024-03-01/month']);
    expect(dates('We have lived here since May 2021.')).toEqual(['2021-05-01/month']);
    expect(dates('Back in December 2022 things were different.')).toEqual(['2022-12-01/month']);
    expect(dates('October 2020 was a long month.')).toEqual(['2020-10-01/month']);
    // The day form wins over the month alone.
    expect(dates('since March 3rd')).toEqual(['2024-03-03/day']);
  });

  it('puts a date without a year nearest to when it was said', () => {
    expect(dates('on January 5th', new Date('2023-12-20T00:00:00Z'))).toEqual(['2024-01-05/day']);
    expect(dates('on December 20th', new Date('2024-01-03T00:00:00Z'))).toEqual(['2023-12-20/day']);
    expect(dates('on August 1st')).toEqual(['2024-08-01/day']);
  });

  it('leaves alone what is not a date', () => {
    expect(dates('You may 3D-print it. I may go in may.')).toEqual([]);
    expect(dates('February 30th, 3/4 and 12.05 are no dates here; Marching orders.')).toEqual([]);
    expect(dates('I have 2 dogs and 2024 reasons.')).toEqual([]);
    expect(dates('')).toEqual([]);
  });
});
