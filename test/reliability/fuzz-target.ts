import { RATE_LIMITED_OPERATIONS } from '@memory-agents/core';
import type { RunningServer } from '@memory-agents/server';
import type { FuzzTarget } from './hostile-requests.js';

/**
 * Prepares a freshly started server for fuzzing: its first organization's request windows are
 * opened wide (so requests reach the handlers instead of a 429), and a ready agent and a thread
 * are created.
 */
export async function openFuzzTarget(server: RunningServer): Promise<FuzzTarget> {
  if (!server.firstKey) throw new Error('fuzzing needs a fresh data dir (its first key)');
  const wide = { limit: 1_000_000, windowSeconds: 1 };
  await server.service.admin.setLimits({
    organizationId: server.firstKey.organizationId,
    limits: { rateLimits: Object.fromEntries(RATE_LIMITED_OPERATIONS.map((operation) => [operation, { subject: wide, organization: wide }])) },
  });
  const key = server.firstKey.key;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await response.json()) as Record<string, string>;
  };
  const agent = await call('POST', '/v1/agents', { agent_config: { role: 'fuzz target', objective: 'survive hostile input' } });
  for (let tries = 0; (await call('GET', `/v1/agents/${agent.agent_id}`)).status !== 'ready'; tries++) {
    if (tries > 200) throw new Error('agent never became ready');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const thread = await call('POST', `/v1/agents/${agent.agent_id}/threads`, { title: 'fuzz' });
  return { url: server.url, key, agentId: agent.agent_id!, threadId: thread.thread_id! };
}
