import { afterAll, beforeAll } from 'vitest';
import { describeLanguageModelConformance } from '@memory-agents/core/testing';
import { openaiCompatibleLanguageModel } from './openai-compatible-language-model.js';
import { startScriptedOpenaiServer, type ScriptedOpenaiServer } from './testing/scripted-openai-server.js';

// One server for the suite; each test gets a fresh adapter. The server's fallback answers
// deterministically, so stream and generate must agree.
let server: ScriptedOpenaiServer;
beforeAll(async () => {
  server = await startScriptedOpenaiServer();
});
afterAll(async () => {
  await server.close();
});

describeLanguageModelConformance({
  name: 'openaiCompatibleLanguageModel (scripted server)',
  create: async () => ({
    port: openaiCompatibleLanguageModel({ baseURL: server.baseURL, model: 'scripted', maxRetries: 0 }),
    stallNextCall: () => server.enqueue('chat', { type: 'stall' }),
  }),
});
