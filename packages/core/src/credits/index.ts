export { createCredits, CREDITS_EXHAUSTED_REASON, type AnswerHold, type Credits } from './credits.js';
export { ANSWER_RESERVATION_WORDS, DEFAULT_PRICES, billedWords, countWords, priceOf, resolvePrices, sumOf, type Prices } from './pricing.js';
