import type { Citation } from '@memory-agents/core';
import { describe, expect, it } from 'vitest';
import { citationHref, withCitationLinks } from './citation-links.js';

const turn: Citation = {
  source_id: 'obs_1',
  label: 'Ana, 2026-03-02 (turn 2)',
  media_type: 'text/plain',
  verified: true,
  target: { kind: 'observation', agent_id: 'agent_1', thread_id: 'thread_1', observation_id: 'obs_1', turn_index: 1 },
};
const page: Citation = {
  source_id: 'src_1',
  label: 'linn.pdf, page 3',
  media_type: 'application/pdf',
  verified: false,
  target: { kind: 'source', agent_id: 'agent_1', source_id: 'src_1', page: 3 },
};

describe('citation links', () => {
  it('gives the paths the API serves a target at, under the mount prefix', () => {
    expect(citationHref(turn.target)).toBe('/v1/agents/agent_1/threads/thread_1/observe/obs_1/status');
    expect(citationHref(page.target)).toBe('/v1/agents/agent_1/sources/src_1');
    expect(citationHref(page.target, '/api/memory')).toBe('/api/memory/v1/agents/agent_1/sources/src_1');
  });

  it("writes the spec's Citation with its keys in the spec's order and leaves the rest of the body as it was", () => {
    const body = { agent_id: 'agent_1', memory_context: 'ctx', citations: [turn, page], stages: [] };
    expect(JSON.stringify(withCitationLinks(body, ''))).toBe(
      JSON.stringify({
        agent_id: 'agent_1',
        memory_context: 'ctx',
        citations: [
          { source_id: 'obs_1', label: 'Ana, 2026-03-02 (turn 2)', media_type: 'text/plain', href: '/v1/agents/agent_1/threads/thread_1/observe/obs_1/status', verified: true },
          { source_id: 'src_1', label: 'linn.pdf, page 3', media_type: 'application/pdf', href: '/v1/agents/agent_1/sources/src_1', verified: false },
        ],
        stages: [],
      }),
    );
  });

  it('puts the prefix in front of a replayed response recorded with root links', () => {
    const recorded = { source_id: 'src_1', label: 'a.pdf', media_type: 'application/pdf', href: '/v1/agents/agent_1/sources/src_1', verified: true };
    expect(withCitationLinks({ citations: [recorded] }, '/api').citations).toEqual([{ ...recorded, href: '/api/v1/agents/agent_1/sources/src_1' }]);
    expect(withCitationLinks({ citations: [recorded] }, '').citations).toEqual([recorded]);
  });
});
