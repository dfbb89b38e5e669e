import { describe, expect, it } from 'vitest';
import { defaultMemoryWriter } from './default-memory-writer.js';
import { localDateNames, resolveRelativeDatesAnyLanguage } from './relative-dates-languages.js';
import { queryTimeRanges } from '../retrieval/query-time.js';

// 2026-03-18 is a Wednesday.
const wednesday = new Date('2026-03-18T10:00:00Z');
const source = { kind: 'turn' as const, threadId: 'thread_x', observationId: 'obs_x', turnIndex: 0 };

describe('relative dates in other languages (chrono locale parsers)', () => {
  it.each([
    ['Ich war gestern mit Anna im Kino', '2026-03-17', 'day'],
    ['Wir sind letzte Woche nach Berlin umgezogen', '2026-03-09', 'week'],
    ['Vor 3 Tagen habe ich mit dem Kurs angefangen', '2026-03-15', 'day'],
    ['Ich habe letzten Monat die Stelle gewechselt', '2026-02-01', 'month'],
    ["Je suis allée au cinéma hier avec ma sœur", '2026-03-17', 'day'],
    ["Il y a 3 jours, je suis tombé dans la rue", '2026-03-15', 'day'],
    ['Ayer fui al cine con mis hermanas', '2026-03-17', 'day'],
    ['Ontem fui ao cinema com a minha irmã', '2026-03-17', 'day'],
    ['Ieri sono andato al cinema con il mio amico', '2026-03-17', 'day'],
    ['Gisteren ging ik met mijn zus naar de film', '2026-03-17', 'day'],
    ['Vorige maand ben ik met de cursus begonnen', '2026-02-01', 'month'],
  ])('resolves %s', (text, date, granularity) => {
    expect(resolveRelativeDatesAnyLanguage(text, wednesday)).toEqual([expect.objectContaining({ date, granularity })]);
  });

  it('leaves stated dates and bare weekdays alone, and English to the English reader', () => {
    expect(resolveRelativeDatesAnyLanguage('Am 3. März 2025 war ich mit ihr in Berlin', wednesday)).toEqual([]);
    expect(resolveRelativeDatesAnyLanguage('Le 12 mars, je suis allé à Lyon avec lui', wednesday)).toEqual([]);
    expect(resolveRelativeDatesAnyLanguage('I went yesterday', wednesday)).toEqual([{ phrase: 'yesterday', date: '2026-03-17', granularity: 'day' }]);
  });

  it('names months and weekdays in the language', () => {
    expect(localDateNames('de', '2026-03-17', 'day')).toBe('März Dienstag');
    expect(localDateNames('fr', '2026-03-17', 'month')).toBe('mars');
    expect(localDateNames('es', '2026-03-17', 'year')).toBe('');
  });
});

describe('defaultMemoryWriter in another language', () => {
  it('dates a German turn by its "gestern" and keys it under the German names of that day', async () => {
    const turn = { turnIndex: 0, speaker: 'Anna', text: 'Ich war gestern mit Paul im Kino.', timestamp: wednesday.toISOString(), tags: [], source };
    const { outcomes } = await defaultMemoryWriter().write({ agentId: 'agent_x', turns: [turn], searchSimilar: async () => [] });
    const [draft] = outcomes[0]!.ok ? outcomes[0]!.memories : [];
    expect(draft!.occurredAt).toBe('2026-03-17T00:00:00.000Z');
    expect(draft!.keywords).toContain('2026-03-17');
    expect(draft!.keywords).toContain('März Dienstag');
  });

  it('an English turn gets exactly the keywords it had before', async () => {
    const turn = { turnIndex: 0, speaker: 'user', text: 'I went to the cinema yesterday with Paul.', timestamp: wednesday.toISOString(), tags: [], source };
    const { outcomes } = await defaultMemoryWriter().write({ agentId: 'agent_x', turns: [turn], searchSimilar: async () => [] });
    const [draft] = outcomes[0]!.ok ? outcomes[0]!.memories : [];
    expect(draft!.keywords).toBe('user 2026-03-18 18 March 2026 wednesday 2026-03-17 17 March 2026 tuesday Paul I went to the cinema yesterday with Paul.');
  });
});

describe('a question in another language names its time', () => {
  const day = (iso: string) => Date.parse(`${iso}T00:00:00.000Z`);
  const DAY = 86_400_000;
  it.each([
    ['Was hat Anna am 3. März 2023 gemacht?', { start: day('2023-03-03') - DAY, end: day('2023-03-03') + 2 * DAY }],
    ['Qu’est-ce que Paul a fait le 8 mai 2023 ?', { start: day('2023-05-08') - DAY, end: day('2023-05-08') + 2 * DAY }],
    // chrono's French parser does not read a month with its year alone: the year still counts.
    ['Qu’est-ce que Paul a fait en mai 2023 ?', { start: day('2023-01-01'), end: day('2024-01-01') }],
    ['¿Qué hizo María el 8 de mayo de 2023?', { start: day('2023-05-08') - DAY, end: day('2023-05-08') + 2 * DAY }],
  ])('%s', (question, range) => {
    expect(queryTimeRanges(question, Date.parse('2024-01-01T00:00:00Z'))).toEqual([range]);
  });

  it('an English question reads as before, and a relative German one against now', () => {
    expect(queryTimeRanges('What did Anna do on 3 March 2023?', 0)).toEqual([{ start: day('2023-03-03') - DAY, end: day('2023-03-03') + 2 * DAY }]);
    expect(queryTimeRanges('Was hat Anna gestern mit ihr gemacht?', Date.parse('2026-03-18T10:00:00Z'))).toEqual([{ start: day('2026-03-17') - DAY, end: day('2026-03-17') + 2 * DAY }]);
  });
});
