export { openaiCompatibleLanguageModel } from './openai-compatible-language-model.js';
export type { OpenaiCompatibleLanguageModelOptions } from './openai-compatible-language-model.js';
export { openaiCompatibleEmbedder } from './openai-compatible-embedder.js';
export type { OpenaiCompatibleEmbedderOptions } from './openai-compatible-embedder.js';
export { buildAnswerMessages, parseCitations, ANSWER_LENGTH_INSTRUCTIONS } from './answer-prompt.js';
export type { BuildAnswerMessagesOptions } from './answer-prompt.js';
export { llmMemoryWriter } from './llm-memory-writer.js';
export type { LlmMemoryWriterOptions } from './llm-memory-writer.js';
export type { RetryEvent } from './provider-client.js';
