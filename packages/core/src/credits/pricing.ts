import { Decimal } from 'decimal.js';
import type { PriceOverrides } from '../ports/store/index.js';

/** Credits per word, decimal strings. */
export type Prices = { inputWord: string; outputWord: string };

/**
 * Default prices (docs/decisions.md "Credits"): 0.001 credit per input word (what is learned:
 * observe, observe-file, observe-and-respond/enrich turns; and a chat message) and 0.002 credit per
 * output word (the words of an answer). Retrieved memory context is not billed.
 */
export const DEFAULT_PRICES: Prices = { inputWord: '0.001', outputWord: '0.002' };

/**
 * Output words reserved when an answer starts, per `answer_length`: the balance must cover them,
 * and the answer is charged for at most this many words (an answer never costs more than its
 * reservation). The unused part returns to the balance when the answer ends.
 */
export const ANSWER_RESERVATION_WORDS = { brief: 150, standard: 500, detailed: 1500 } as const;

/** The prices in force: the organization's overrides over the service defaults. */
export function resolvePrices(overrides: PriceOverrides | undefined, defaults: Prices = DEFAULT_PRICES): Prices {
  return { inputWord: overrides?.inputWord ?? defaults.inputWord, outputWord: overrides?.outputWord ?? defaults.outputWord };
}

/**
 * Counts words as whitespace-separated tokens: the unit the service bills, and the count
 * `words_total` of observe-file reports. `countWords('a  b\nc')` is 3; `countWords('')` is 0.
 */
export function countWords(text: string): number {
  let count = 0;
  for (const _ of text.matchAll(/\S+/g)) count++;
  return count;
}

/**
 * Words billed for a text: {@link countWords}, the same count `words_total` of observe-file
 * reports, so a document costs what `observe` of the same turns would.
 */
export function billedWords(text: string): number {
  return countWords(text);
}

/** `words` times `price`, exact, as a plain decimal string. */
export function priceOf(words: number, price: string): string {
  return new Decimal(price).times(words).toFixed();
}

/** Sum of decimal strings, exact. */
export function sumOf(amounts: readonly string[]): string {
  return amounts.reduce((total, amount) => total.plus(amount), new Decimal(0)).toFixed();
}
