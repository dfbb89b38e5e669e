import { expect } from 'vitest';
import type { MemoryIndex, MemoryRecord } from '../../../ports/memory-index.js';
import { AGENT, FINGERPRINT, axis, ids, memory } from './fixtures.js';
import type { MemoryIndexCase } from './types.js';

const upsert = (index: MemoryIndex, ...records: MemoryRecord[]) => index.upsert({ records, embedder: FINGERPRINT });
const lexical = async (index: MemoryIndex, text: string) => ids((await index.search({ agentId: AGENT, text, vector: null, limit: 10 })).lexical);

/** Full text in German, French and Spanish (issue 44): core's analyzer, the same on every index. */
export function languageCases(test: MemoryIndexCase): void {
  test('lexical: a question in German, French or Spanish finds the memory through another inflection, accents and ß folded', async ({ index }) => {
    const anna = memory({ text: 'Anna wohnt seit März in Berlin und liest gern ein Buch über Gärten', speaker: 'Anna', vector: axis(1) });
    const paul = memory({ text: "Paul habite à Lyon depuis mars et il a acheté un livre pour l'école", speaker: 'Paul', vector: axis(2) });
    const maria = memory({ text: 'María vivía en Madrid con sus hermanas y canta una canción de su abuela', speaker: 'María', vector: axis(3) });
    const street = memory({ text: 'Die Straße vor dem Haus ist seit Montag gesperrt', speaker: 'Anna', vector: axis(4) });
    const english = memory({ text: 'Caroline was running to the library with new shoes', vector: axis(5) });
    await upsert(index, anna, paul, maria, street, english);
    // No names in the questions: each meets its memory only through a stem, a fold or an elision
    // that the English pipeline alone did not make (`bücher`/`buch`, `straße`/`STRASSE`,
    // `l'école`/`l'ecole`, `canción`/`canciones`).
    expect(await lexical(index, 'Welche Bücher mag sie?')).toEqual([anna.id]);
    expect(await lexical(index, 'Wie lange ist die STRASSE zu?')).toEqual([street.id]);
    expect(await lexical(index, "Où est l'ecole ?")).toEqual([paul.id]);
    expect(await lexical(index, 'Quels livres a-t-il achetés ?')).toEqual([paul.id]);
    expect(await lexical(index, '¿Qué canciones cantaba?')).toEqual([maria.id]);
    // English as before: inflections meet, the German and French memories stay out of it.
    expect(await lexical(index, 'Who runs to the libraries?')).toEqual([english.id]);
  });
}
