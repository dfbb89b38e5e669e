import { describe, expect, it } from 'vitest';
import { parseBody } from '../validation/parse.js';
import { chatBody, observeBody } from './observations.js';
import { createAgentBody } from './agents.js';
import { createThreadBody } from './threads.js';
import { isStorableText, MAX_METADATA_DEPTH } from './common.js';

const refused = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error as { code: string; status: number; message: string };
  }
  throw new Error('accepted');
};

describe('storable text', () => {
  it('accepts any well-formed text without NUL, including astral characters and RTL marks', () => {
    for (const value of ['', 'plain', '\u{1F600} emoji', '\u202Eright-to-left\u202C', 'tab\tand\nnewline', '\uFFFF', '\uD83D\uDE00']) {
      expect(isStorableText(value), JSON.stringify(value)).toBe(true);
    }
  });

  it('refuses U+0000 and unpaired surrogates anywhere in the string', () => {
    for (const value of ['\u0000', 'a\u0000b', '\uD800', 'x\uD800', '\uDC00y', '\uDE00\uD83D', 'ok\uD83D']) {
      expect(isStorableText(value), JSON.stringify(value)).toBe(false);
    }
  });

  it('makes every caller text field a 422 invalid_request naming the field', () => {
    const agent = refused(() => parseBody(createAgentBody, { agent_config: { role: 'r\u0000', objective: 'o' } }));
    expect(agent).toMatchObject({ code: 'invalid_request', status: 422 });
    expect(agent.message).toContain('agent_config.role');
    expect(refused(() => parseBody(createAgentBody, { agent_config: { role: 'r', objective: '\uD800' } })).message).toContain('agent_config.objective');
    expect(refused(() => parseBody(createThreadBody, { title: '\uDC00' })).message).toContain('title');
    expect(refused(() => parseBody(observeBody, { observations: [{ content: [{ type: 'text' as const, text: 'a\u0000' }] }] })).message).toContain('observations.0.content.0.text');
    expect(refused(() => parseBody(observeBody, { observations: [{ content: [{ type: 'text' as const, text: 'a' }], speaker: '\uD800' }] })).message).toContain('speaker');
    expect(refused(() => parseBody(chatBody, { turn_id: 't\u0000', message: 'm' })).message).toContain('turn_id');
    expect(refused(() => parseBody(chatBody, { turn_id: 't', message: '\uD800' })).message).toContain('message');
  });

  it('checks metadata keys and values recursively and bounds their nesting', () => {
    const withMetadata = (metadata: unknown) => ({ agent_config: { role: 'r', objective: 'o', metadata } });
    expect(parseBody(createAgentBody, withMetadata({ a: { b: ['c', 1, null, { d: 'e' }] } }))).toBeTruthy();
    expect(refused(() => parseBody(createAgentBody, withMetadata({ 'k\u0000': 1 }))).code).toBe('invalid_request');
    expect(refused(() => parseBody(createAgentBody, withMetadata({ a: { b: ['\uD800'] } }))).message).toContain('agent_config.metadata.a');
    expect(refused(() => parseBody(createThreadBody, { metadata: { a: { ['\u0000']: true } } })).status).toBe(422);
    let deep: unknown = 'leaf';
    for (let i = 0; i < MAX_METADATA_DEPTH + 1; i++) deep = [deep];
    expect(refused(() => parseBody(createThreadBody, { metadata: { deep } })).message).toContain('nested deeper');
  });
});
