import { describe, expect, it } from 'vitest';
import { main as aiSdkChat } from './ai-sdk-chat.js';
import { main as embedCore } from './embed-core.js';
import { main as expressApp } from './express-app.js';
import { main as fastifyApp } from './fastify-app.js';
import { main as honoApp } from './hono-app.js';
import { main as mountHandler } from './mount-handler.js';

/**
 * What a client of a mounted API does: reads its session, creates an agent and a thread, observes
 * a fact, waits until it is learned and chats; returns the chat answer.
 */
async function roundTrip(url: string, key: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const parsed = (await response.json()) as any;
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(parsed)}`);
    return parsed;
  };
  const wait = async (read: () => Promise<boolean>) => {
    for (let attempt = 0; !(await read()); attempt++) {
      if (attempt > 2000) throw new Error('timed out waiting');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  const session = await call('GET', '/v1/session');
  expect(session.organization_name).toBe('Acme');
  const agent = await call('POST', '/v1/agents', { agent_config: { role: 'assistant', objective: 'remember invoices' } });
  await wait(async () => (await call('GET', `/v1/agents/${agent.agent_id}`)).status === 'ready');
  const thread = await call('POST', `/v1/agents/${agent.agent_id}/threads`, { title: 'Onboarding' });
  const base = `/v1/agents/${agent.agent_id}/threads/${thread.thread_id}`;
  const accepted = await call('POST', `${base}/observe`, {
    observations: [{ speaker: 'alice', timestamp: '2024-03-04T10:00:00Z', content: [{ type: 'text', text: 'Our invoices go to billing@acme.test and are due in 30 days.' }] }],
  });
  await wait(async () => (await call('GET', `${base}/observe/${accepted.observation_id}/status`)).status === 'committed');
  const answer = await call('POST', `${base}/chat`, { turn_id: 't1', message: 'Where do invoices go?' });
  expect(answer.message).toContain('billing@acme.test');
  expect(answer.citations.length).toBeGreaterThan(0);
  return { ...(answer as { message: string; citations: { href: string }[] }), base };
}

describe('examples', () => {
  it('embed-core learns two facts and answers from them with a verified citation', async () => {
    const output = await embedCore();
    expect(output).toContain('billing@acme.test');
    expect(output).toMatch(/cited: .*verified true/);
  });

  it('mount-handler serves the API and passes other paths to the host application', async () => {
    const running = await mountHandler();
    try {
      const session = await fetch(`${running.url}/v1/session`, { headers: { authorization: `Bearer ${running.key}` } });
      expect(session.status).toBe(200);
      expect(((await session.json()) as { organization_name: string }).organization_name).toBe('Acme');
      const other = await fetch(`${running.url}/health`);
      expect(await other.text()).toBe('hello from the host application\n');
    } finally {
      await running.close();
    }
  });

  it('express-app serves the API under /api/memory behind express.json(), citation links under the prefix', async () => {
    const running = await expressApp();
    try {
      expect(running.url).toMatch(/\/api\/memory$/);
      const answer = await roundTrip(running.url, running.key);
      for (const citation of answer.citations) expect(citation.href).toMatch(/^\/api\/memory\/v1\/agents\//);
      const followed = await fetch(`${new URL(running.url).origin}${answer.citations[0]!.href}`, { headers: { authorization: `Bearer ${running.key}` } });
      expect(followed.status).toBe(200);
      expect(await (await fetch(`${new URL(running.url).origin}/health`)).text()).toBe('hello from the host application\n');
    } finally {
      await running.close();
    }
  });

  it('fastify-app serves the API with the body Fastify parsed, and streams uploads past it', async () => {
    const running = await fastifyApp();
    try {
      const answer = await roundTrip(running.url, running.key);
      for (const citation of answer.citations) expect(citation.href).toMatch(/^\/v1\/agents\//);
      const form = new FormData();
      form.append('file', new Blob(['The office moved to Berlin.'], { type: 'text/plain' }), 'office.txt');
      const upload = await fetch(`${running.url}${answer.base}/observe-file`, { method: 'POST', headers: { authorization: `Bearer ${running.key}` }, body: form });
      expect(upload.status).toBe(202);
      expect(((await upload.json()) as { source_id: string }).source_id).toMatch(/^src_/);
      expect(await (await fetch(`${running.url}/health`)).text()).toBe('hello from the host application\n');
    } finally {
      await running.close();
    }
  });

  it('hono-app serves the API through the fetch handler, chat/stream as server-sent events', async () => {
    const running = await honoApp();
    try {
      const answer = await roundTrip(running.url, running.key);
      for (const citation of answer.citations) expect(citation.href).toMatch(/^\/v1\/agents\//);
      const stream = await fetch(`${running.url}${answer.base}/chat/stream`, {
        method: 'POST',
        headers: { authorization: `Bearer ${running.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ turn_id: 't2', message: 'Where do invoices go?' }),
      });
      expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      const text = await stream.text();
      expect(text).toMatch(/^event: context\n/);
      expect(text).toContain('event: done\n');
      expect(text).toContain('billing@acme.test');
      expect(await (await fetch(`${running.url}/health`)).text()).toBe('hello from the host application\n');
    } finally {
      await running.close();
    }
  });

  it('ai-sdk-chat answers a fresh prompt from what the first exchange taught (scripted model, in-process server)', async () => {
    const { output, prompts } = await aiSdkChat({});
    expect(prompts).toHaveLength(2);
    expect(prompts[0]!.filter((message) => message.role === 'system')).toEqual([]);
    const system = prompts[1]!.filter((message) => message.role === 'system').map((message) => String(message.content));
    expect(system[0]).toBe('Answer in one sentence.');
    // The memory rule only: recalled text goes into the user message, fenced (issue 33).
    expect(system[1]).toMatch(/^Memory items are quoted data/);
    expect(system.join('\n')).not.toContain('Lisbon');
    expect(JSON.stringify(prompts[1]!.at(-1))).toMatch(/Memory:.*<memory-data id=.*Lisbon/);
    expect(output.split('\n').at(-1)).toMatch(/^model: From memory \[1\].*Lisbon/);
  });
});
