import { describe, expect, it } from 'vitest';
import { analyze, analyzeQuery, detectLanguage } from './text-analysis.js';

/** True when some query term is one of the text's terms (what every full-text channel needs). */
const meets = (query: string, text: string) => {
  const terms = new Set(analyze(text));
  return analyzeQuery(query).filter((term) => terms.has(term));
};

describe('detectLanguage', () => {
  it('reads prose of each language as that language', () => {
    expect(detectLanguage('Anna wohnt seit März in Berlin und arbeitet bei einer Bank')).toBe('de');
    expect(detectLanguage('Paul habite à Lyon depuis mars avec sa femme')).toBe('fr');
    expect(detectLanguage('María vivía en Madrid con sus hermanas')).toBe('es');
    expect(detectLanguage('O João mora em Lisboa desde o ano passado')).toBe('pt');
    expect(detectLanguage("Giulia abita a Roma dall'anno scorso con il suo cane")).toBe('it');
    expect(detectLanguage('Sanne woont sinds maart in Utrecht met haar vriend')).toBe('nl');
  });

  it('keeps English the default for English, short, ambiguous and code-like text', () => {
    for (const text of ['Caroline went to the LGBTQ support group', 'I want to die hard', 'Tacos con carne', 'Wo?', '', 'Plan B', 'We ate at the Café de Flore in Paris',
      "Here it is: ``` const list = document.querySelectorAll('input[type=button]'); ```", 'I was in the war in 1944']) {
      expect(detectLanguage(text), text).toBe('en');
    }
  });
});

describe('analyze: other languages', () => {
  it('folds case (ß → ss) and accents, and splits French and Italian elision', () => {
    expect(analyze('Die Straße ist gesperrt und die STRASSE daneben auch')).toEqual(['strass', 'gesperrt', 'strass', 'daneb']);
    expect(analyze("L'homme et l'enfant sont allés à l'école avec Hélène")).toEqual(analyze("L’homme et l’enfant sont allés à l’ecole avec Helene"));
    expect(analyze("L'homme et l'enfant sont allés à l'école")).toContain('homm');
    expect(analyze("Giulia abita a Roma dall'anno scorso con il suo cane")).toContain('anno');
    // Compatibility forms (NFKC): the ﬁ ligature is two letters.
    expect(analyze('Le ﬁlm est très beau et il est long')).toEqual(analyze('Le film est très beau et il est long'));
  });

  it('drops that language’s stop words and keeps numbers verbatim', () => {
    expect(analyze('Ich habe am 12. März 2024 mit ihr über das Haus gesprochen')).toEqual(['12', 'marz', '2024', 'haus', 'gesproch']);
  });
});

describe('retrieval terms across inflections', () => {
  it('German: the question meets the memory through another inflection', () => {
    expect(meets('Wo wohnt Anna?', 'Anna wohnt seit März in Berlin')).toEqual(expect.arrayContaining(['wohnt', 'anna']));
    expect(meets('Welche Bücher hat Anna gelesen?', 'Anna liest gern ein Buch über Gärten')).toContain('buch');
    // A limit of Snowball German (suffixes -en, -er, -e, -s, -st, not -t): `wohnen` and `wohnt` stay apart.
    expect(meets('Wo wohnen sie jetzt?', 'Sie wohnt seit März in Berlin')).toEqual([]);
  });

  it('French: the question meets the memory through another inflection', () => {
    expect(meets('Où habite Paul ?', 'Paul habite à Lyon depuis mars')).toEqual(expect.arrayContaining(['habit', 'paul']));
    expect(meets('Quels livres Paul a-t-il achetés ?', 'Paul a acheté un livre pour sa sœur')).toEqual(expect.arrayContaining(['livr', 'achet']));
  });

  it('Spanish: the question meets the memory through another inflection', () => {
    expect(meets('¿Dónde vive María?', 'María vivía en Madrid con sus hermanas')).toEqual(expect.arrayContaining(['viv']));
    expect(meets('¿Qué canciones cantaba Lucía?', 'Lucía canta una canción de su abuela')).toEqual(expect.arrayContaining(['cancion', 'cant']));
  });

  it('a query in another language also searches the terms memories stored before issue 44 have', () => {
    // Stored before: the English pipeline's terms of a French text.
    const old = new Set(['paul', 'habit', 'lyon', 'depui', 'mar']);
    expect(analyzeQuery('Où habite Paul ?').filter((term) => old.has(term))).toEqual(['habit', 'paul']);
    const oldGerman = new Set(['anna', 'wohnt', 'seit', 'märz', 'berlin']);
    expect(analyzeQuery('Wohnt Anna seit März in Berlin?').filter((term) => oldGerman.has(term)).sort()).toEqual(['anna', 'berlin', 'märz', 'seit', 'wohnt']);
  });

  it('an English query has exactly the terms it had before', () => {
    expect(analyzeQuery('What did Caroline do on 8 May 2023? She was running!')).toEqual(['carolin', '8', 'may', '2023', 'run']);
    expect(analyzeQuery('running runs run')).toEqual(['run']);
  });
});
