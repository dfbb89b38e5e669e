import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ask, learnConversation, openEnvironment, type EvalConversation, type EvalEnvironment, type LearnedConversation } from './harness.js';

/**
 * Issue 44 end to end: conversations in German, French and Spanish learned by the default writer
 * (hashed embedder, in-memory index) and questioned with other inflections than the memory; the
 * evidence turn must be the first one cited.
 */
const conversation = (id: string, turns: [speaker: string, text: string][]): EvalConversation => ({
  id,
  sessions: [{ id: `${id}-1`, timestamp: '2026-03-18T10:00:00.000Z', turns: turns.map(([speaker, text], i) => ({ ref: `${id}:${i}`, speaker, text })) }],
});

const CONVERSATIONS = {
  de: conversation('de', [
    ['Anna', 'Hallo Paul, wie geht es dir?'],
    ['Paul', 'Gut, danke! Ich habe gerade viel Arbeit im Büro.'],
    ['Anna', 'Ich wohne seit März in Berlin, in einer kleinen Wohnung.'],
    ['Paul', 'Schön! Und was machst du in deiner Freizeit?'],
    ['Anna', 'Ich lese gern Bücher über alte Gärten.'],
    ['Paul', 'Meine Schwester arbeitet als Ärztin in Hamburg.'],
  ]),
  fr: conversation('fr', [
    ['Paul', 'Salut Marie, comment ça va ?'],
    ['Marie', 'Très bien, merci. Je suis un peu fatiguée.'],
    ['Paul', 'Moi, j’habite à Lyon depuis mars avec ma femme.'],
    ['Marie', 'J’ai acheté trois livres de cuisine pour l’anniversaire de ma mère.'],
    ['Paul', 'Mon frère travaille dans une boulangerie à Nantes.'],
  ]),
  es: conversation('es', [
    ['María', 'Hola Lucía, ¿qué tal estás?'],
    ['Lucía', 'Muy bien, gracias. Ayer trabajé mucho en la oficina.'],
    ['María', 'Mis hermanas viven en Sevilla desde el año pasado.'],
    ['Lucía', 'Mi abuela canta canciones antiguas cuando cocina.'],
    ['María', 'Yo juego al tenis con mi vecino los domingos.'],
  ]),
};

const QUESTIONS: [language: keyof typeof CONVERSATIONS, question: string, evidence: string][] = [
  ['de', 'Wo wohnt Anna?', 'de:2'],
  ['de', 'Welches Buch liest Anna?', 'de:4'],
  ['de', 'Wo arbeitet die Schwester von Paul als Ärztin?', 'de:5'],
  ['fr', 'Où habite Paul ?', 'fr:2'],
  ['fr', 'Quel livre Marie a-t-elle acheté ?', 'fr:3'],
  ['fr', 'Où travaillent les frères de Paul ?', 'fr:4'],
  ['es', '¿Dónde vive la hermana de María?', 'es:2'],
  ['es', '¿Qué canción cantaba la abuela de Lucía?', 'es:3'],
  ['es', '¿Con quién jugaba María al tenis?', 'es:4'],
];

describe('conversations in German, French and Spanish (issue 44)', () => {
  let env: EvalEnvironment;
  const learned = new Map<string, LearnedConversation>();
  beforeAll(async () => {
    env = await openEnvironment('memory');
    for (const [language, value] of Object.entries(CONVERSATIONS)) learned.set(language, await learnConversation(env, value));
  });
  afterAll(async () => {
    await env?.close();
  });

  it.each(QUESTIONS)('%s: %s', async (language, question, evidence) => {
    const { ranked } = await ask(env, learned.get(language)!, question, 4000);
    expect(ranked[0]?.ref).toBe(evidence);
  });
});
