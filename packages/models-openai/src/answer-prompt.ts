/**
 * The answer prompt lives in core (chat builds it for every model); it is re-exported here for
 * callers that drive an `openaiCompatibleLanguageModel` directly.
 */
export { ANSWER_LENGTH_INSTRUCTIONS, buildAnswerMessages, parseCitations } from '@memory-agents/core/adapter';
export type { BuildAnswerMessagesOptions } from '@memory-agents/core/adapter';
