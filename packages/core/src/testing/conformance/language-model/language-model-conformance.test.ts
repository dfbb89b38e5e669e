import { describeLanguageModelConformance } from './language-model-conformance.js';
import { mockLanguageModel } from '../../mocks/mock-language-model.js';

describeLanguageModelConformance({
  name: 'mockLanguageModel (defaults)',
  create: async () => ({ port: mockLanguageModel() }),
});

describeLanguageModelConformance({
  name: 'mockLanguageModel (stalling on demand)',
  create: async () => {
    let stall = false;
    const port = mockLanguageModel({
      generate: (request) => {
        if (stall) return new Promise<string>(() => undefined);
        return request.task?.kind === 'answer' ? 'Ana lives in Lisbon [1], and [9] is not an item.' : 'Hello Ana, nice to meet you.';
      },
    });
    return { port, stallNextCall: () => (stall = true) };
  },
});
