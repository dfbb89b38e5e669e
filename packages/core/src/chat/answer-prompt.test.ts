import { describe, expect, it } from 'vitest';
import type { AnswerContextItem } from '../ports/language-model.js';
import { ANSWER_LENGTH_INSTRUCTIONS, agentSystemPrompt, buildAnswerMessages, parseCitations } from './answer-prompt.js';

const items: AnswerContextItem[] = [
  { number: 1, text: 'Ana moved to Lisbon.\nShe loves it.', speaker: 'Ana', occurredAt: '2024-05-10T00:00:00.000Z', label: 'Chat turn 3' },
  { number: 2, text: 'The report is due Friday.', speaker: null, occurredAt: null, label: 'report.pdf p. 2' },
];

describe('buildAnswerMessages', () => {
  it('numbers the memory items and asks to cite them as [n]', () => {
    const [system, user] = buildAnswerMessages({ question: 'Where does Ana live?', items, answerLength: 'standard' });
    expect(system?.role).toBe('system');
    expect(system?.content).toContain('[1]');
    expect(system?.content).toMatch(/cite/i);
    expect(user?.role).toBe('user');
    expect(user?.content).toContain('[1] (date: 2024-05-10T00:00:00.000Z; speaker: Ana; source: Chat turn 3) Ana moved to Lisbon. She loves it.');
    expect(user?.content).toContain('[2] (source: report.pdf p. 2) The report is due Friday.');
    expect(user?.content.endsWith('Question: Where does Ana live?')).toBe(true);
  });

  it('turns answer_length into an instruction, never a cut', () => {
    const brief = buildAnswerMessages({ question: 'q', items, answerLength: 'brief' })[0]?.content ?? '';
    const detailed = buildAnswerMessages({ question: 'q', items, answerLength: 'detailed' })[0]?.content ?? '';
    expect(brief).toContain(ANSWER_LENGTH_INSTRUCTIONS.brief);
    expect(brief).toContain('2 to 4 sentences');
    expect(detailed).toContain(ANSWER_LENGTH_INSTRUCTIONS.detailed);
    expect(detailed).toMatch(/every relevant fact, date, name, number and direct quote/);
    expect(detailed).toMatch(/list or a table/);
    for (const content of [brief, detailed]) expect(content).toMatch(/never stop in the middle/i);
  });

  it("puts the agent's system prompt first and keeps the rules", () => {
    const [system] = buildAnswerMessages({ question: 'q', items: [], answerLength: 'brief', systemPrompt: 'You are Ana’s travel agent.' });
    expect(system?.content.startsWith('You are Ana’s travel agent.')).toBe(true);
    expect(system?.content).toMatch(/cite/i);
  });

  it('says so when there are no items', () => {
    expect(buildAnswerMessages({ question: 'q', items: [], answerLength: 'brief' })[1]?.content).toContain('Memory items: none.');
  });
});

describe('parseCitations', () => {
  it('returns cited numbers in order of first appearance, without duplicates', () => {
    expect(parseCitations('Lisbon [2], since May [1][2]. Also [2, 3] and [1; 3].', 3)).toEqual([2, 1, 3]);
  });

  it('keeps only numbers within 1..itemCount', () => {
    expect(parseCitations('See [0], [4], [12] and [3].', 3)).toEqual([3]);
    expect(parseCitations('No citations here, only [a] and [].', 3)).toEqual([]);
  });
});

describe('buildAnswerMessages with images and an agent prompt', () => {
  it("sends the turn's images with the question as image parts", () => {
    const image = { mediaType: 'image/png', data: new Uint8Array([137, 80, 78, 71]) };
    const [system, user] = buildAnswerMessages({ question: 'What is in the picture?', items, answerLength: 'standard', images: [image] });
    expect(system?.images).toBeUndefined();
    expect(user?.images).toEqual([image]);
  });

  it("states the agent's role and objective before the rules", () => {
    const [system] = buildAnswerMessages({ question: 'q', items, answerLength: 'standard', systemPrompt: agentSystemPrompt({ role: 'travel agent', objective: 'plan trips' }) });
    expect(system?.content.startsWith('Your role: travel agent\nYour objective: plan trips')).toBe(true);
  });
});

describe('buildAnswerMessages item lines', () => {
  it('leaves the source out when it only repeats the speaker (a conversation turn)', () => {
    const [, user] = buildAnswerMessages({ question: 'q', items: [{ number: 1, text: 'Ana lives in Porto.', speaker: 'Ana', occurredAt: null, label: 'Ana' }], answerLength: 'standard' });
    expect(user?.content).toContain('[1] (speaker: Ana) Ana lives in Porto.');
  });
});
