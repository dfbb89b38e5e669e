import { describe, expect, it } from 'vitest';
import { defaultMemoryWriter } from './default-memory-writer.js';
import { expiryInLanguage } from './expiry-phrases-languages.js';

// 2026-03-18 is a Wednesday.
const said = new Date('2026-03-18T10:00:00Z');
const END_OF_FRIDAY = '2026-03-21T00:00:00.000Z';
const END_OF_3_APRIL = '2026-04-04T00:00:00.000Z';

describe('expiryInLanguage', () => {
  it.each([
    ['de', 'Ich bin bis Freitag in Hamburg.', END_OF_FRIDAY],
    ['de', 'Mein Abo endet am 3. April.', END_OF_3_APRIL],
    ['fr', "Je suis à Lyon jusqu'à vendredi.", END_OF_FRIDAY],
    ['fr', 'Mon abonnement expire le 3 avril.', END_OF_3_APRIL],
    ['es', 'Estoy en Madrid hasta el viernes.', END_OF_FRIDAY],
    ['es', 'Mi suscripción vence el 3 de abril.', END_OF_3_APRIL],
    ['pt', 'Estou em Lisboa até sexta.', END_OF_FRIDAY],
    ['pt', 'A minha assinatura expira em 3 de abril.', END_OF_3_APRIL],
    ['it', 'Sono a Roma fino a venerdì.', END_OF_FRIDAY],
    ['it', "L'abbonamento scade il 3 aprile.", END_OF_3_APRIL],
    ['nl', 'Ik ben tot vrijdag in Utrecht.', END_OF_FRIDAY],
    ['nl', 'Mijn abonnement verloopt op 3 april.', END_OF_3_APRIL],
  ] as const)('%s: %s', (language, text, expected) => {
    expect(expiryInLanguage(language, text, said)).toBe(expected);
  });

  it.each([
    ['de', 'Ich war bis Freitag in Hamburg.'],
    ['de', 'Ich bin bis Freitag in Hamburg geblieben.'],
    ['de', 'Wir haben gestern bis Mitternacht gearbeitet.'],
    ['fr', "J'étais à Lyon jusqu'à vendredi."],
    ['fr', "Je suis resté à Lyon jusqu'à vendredi."],
    ['es', 'Estuve en Madrid hasta el viernes.'],
    ['es', 'Me quedé en Madrid hasta el viernes.'],
    ['pt', 'Estive em Lisboa até sexta.'],
    ['it', 'Sono stato a Roma fino a venerdì.'],
    ['nl', 'Ik was tot vrijdag in Utrecht.'],
    ['nl', 'Ik ben tot vrijdag in Utrecht gebleven.'],
    // A time of day is a daily hour, and a date before the turn is no bound.
    ['de', 'Der Laden ist bis 22 Uhr offen.'],
    ['fr', 'Mon abonnement a expiré le 3 mars.'],
  ] as const)('%s: no bound in %s', (language, text) => {
    expect(expiryInLanguage(language, text, said)).toBeNull();
  });
});

describe('defaultMemoryWriter: expiry of a turn in another language', () => {
  it('a French turn bounded by "jusqu\'à vendredi" expires at the end of that Friday; its narrative twin does not', async () => {
    const source = { kind: 'turn' as const, threadId: 'thread_x', observationId: 'obs_x', turnIndex: 0 };
    const turns = ["Je suis à Lyon chez ma sœur jusqu'à vendredi.", "J'étais à Lyon chez ma sœur jusqu'à vendredi."].map((text, turnIndex) => ({
      turnIndex, speaker: 'Paul', text, timestamp: said.toISOString(), tags: [], source: { ...source, turnIndex },
    }));
    const { outcomes } = await defaultMemoryWriter().write({ agentId: 'agent_x', turns, searchSimilar: async () => [] });
    const drafts = outcomes.map((outcome) => (outcome.ok ? outcome.memories[0] : undefined));
    expect(drafts[0]?.expiresAt).toBe(END_OF_FRIDAY);
    expect(drafts[1]?.expiresAt).toBeUndefined();
  });
});
