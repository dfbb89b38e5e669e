import { describe, expect, it } from 'vitest';
import { isServiceError } from '../errors/index.js';
import { learningService } from '../__fixtures__/learning-service.js';
import { LanguageModelError, type GenerateRequest, type LanguageModel } from '../ports/language-model.js';
import { mockLanguageModel } from '../testing/mocks/mock-language-model.js';

const said = (text: string) => ({ content: [{ type: 'text' as const, text }], speaker: 'Ana', timestamp: '2026-03-02T10:00:00Z' });

async function learned(model: LanguageModel) {
  const setup = await learningService({ model });
  const status = await setup.observeSettled([said('Ana keeps bees on her roof.'), said('Ana plays the cello on Sundays.')]);
  expect(status.status).toBe('committed');
  return setup;
}

describe('chat: grounded answers with a prompt-reading model', () => {
  it("sends the numbered grounded prompt with the agent's role, and cites exactly the items the model cites", async () => {
    const model = mockLanguageModel({
      generate: (request: GenerateRequest) => {
        const cello = request.task!.items.find((item) => item.text.includes('cello'))!;
        return { text: `Ana plays the cello [${cello.number}].` };
      },
    });
    const { service, owner, agentId, threadId } = await learned(model);
    const response = await service.chat({ caller: owner, agentId, threadId, body: { turn_id: 't1', message: 'What does Ana play?', answer_length: 'detailed' } });
    const [request] = model.generateCalls;
    expect(request!.messages[0]!.content).toMatch(/^Your role: assistant\nYour objective: remember\n\n/);
    expect(request!.messages[0]!.content).toContain('Answer in detail');
    expect(request!.messages[1]!.content).toMatch(/^Memory items:\n<memory-data id="[0-9a-f]{16}">\n> \[1\] \(date: 2026-03-02T10:00:00\.000Z; speaker: Ana\) /);
    expect(request!.messages[1]!.content.endsWith('Question: What does Ana play?')).toBe(true);
    expect(request!.maxOutputTokens).toBeUndefined();
    // The model reported no citedItems: its [n] markers decide, and nothing else is cited.
    expect(response.message).toMatch(/^Ana plays the cello \[\d\]\.$/);
    expect(response.citations).toHaveLength(1);
    expect(response.citations[0]).toMatchObject({ label: 'Ana, 2026-03-02 (turn 2)', verified: true });
    await service.stop();
  });

  it('cites nothing when the model cites nothing', async () => {
    const { service, owner, agentId, threadId } = await learned(mockLanguageModel({ generate: { text: 'I do not remember that.', citedItems: [] } }));
    const response = await service.chat({ caller: owner, agentId, threadId, body: { turn_id: 't1', message: 'What does Ana play?' } });
    expect(response.citations).toEqual([]);
    await service.stop();
  });

  it('cites from the [n] markers of a streamed answer', async () => {
    const { service, owner, agentId, threadId } = await learned(mockLanguageModel({ stream: ['Bees ', '[1]', ' and cello [2].'] }));
    const events = [];
    for await (const event of await service.chatStream({ caller: owner, agentId, threadId, body: { turn_id: 't1', message: 'What does Ana do?' } })) events.push(event);
    const done = events.at(-1);
    expect(done?.event).toBe('done');
    if (done?.event !== 'done') return;
    expect(done.data.message).toBe('Bees [1] and cello [2].');
    expect(done.data.citations).toHaveLength(2);
    await service.stop();
  });

  it.each(['unavailable', 'timeout', 'failed'] as const)('is 503 answer_model_unavailable when the model fails %s', async (kind) => {
    const model = mockLanguageModel({
      generate: () => {
        throw new LanguageModelError(kind, 'scripted');
      },
    });
    const { service, owner, agentId, threadId } = await learned(model);
    const error = await service.chat({ caller: owner, agentId, threadId, body: { turn_id: 't1', message: 'What does Ana play?' } }).catch((caught: unknown) => caught);
    expect(isServiceError(error) && { code: error.code, status: error.status }).toEqual({ code: 'answer_model_unavailable', status: 503 });
    await service.stop();
  });
});
