import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, readyAgent, type Client } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';
import { newThread, pollStatus, said, threadPaths } from '../learning/learning-support.js';

// Redaction by an agent's extraction policy (issue 44), end to end: the built `serve` with an
// operator kind of its own (`--redact-pattern`), the policy set over HTTP, and nothing of the
// personal data in the memories, the thread's turns, recall, the receipt or an export.

const SAID = 'Card 5555-5555-5555-4444, mail ana.lopez@example.com, staff id EMP-123456; order 4000123456 of 2024-05-08 cost 49.90 euros.';
const REDACTED = 'Card [redacted:card_number], mail [redacted:email], staff id [redacted:employee_id]; order 4000123456 of 2024-05-08 cost 49.90 euros.';
const SECRETS = ['5555', 'ana.lopez', 'EMP-123456'];

let server: ServerProcess;
let api: Client;

beforeAll(async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'ma-e2e-'));
  server = await startServerProcess({ dataDir, args: ['--data', dataDir, '--redact-pattern', 'employee_id=\\bEMP-\\d{6}\\b'] });
  api = client(server.url, server.key);
}, 120_000);
afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

describe('extraction_policy.redact over HTTP', () => {
  it('stores, learns, recalls and exports the turn with the named kinds masked, and the receipt names each rule', async () => {
    const agentId = (await readyAgent(api, { role: 'billing', objective: 'help', extraction_policy: { redact: ['card_number', 'email', 'employee_id'] } })).agent_id;
    expect((await api.get(`/v1/agents/${agentId}`)).body.agent_config.extraction_policy).toEqual({ redact: ['card_number', 'email', 'employee_id'], version: 1 });
    const threadId = await newThread(api, agentId);
    const paths = threadPaths(agentId, threadId);
    const accepted = await api.post(paths.observe, { observations: [said(SAID)] });
    expect(accepted.status, accepted.text).toBe(202);
    expect((await pollStatus(api, paths.status(accepted.body.observation_id))).status).toBe('committed');

    const memories = await api.get(`/v1/agents/${agentId}/memories`);
    expect(memories.body.memories.map((memory: { text: string }) => memory.text)).toEqual([REDACTED]);
    const turns = await api.get(`${paths.thread}/turns`);
    expect(turns.body.turns.map((turn: { text: string }) => turn.text)).toEqual([REDACTED]);
    const receipt = await api.get(`${paths.thread}/observe/${accepted.body.observation_id}/receipt`);
    expect(receipt.body.turns[0].redacted).toEqual([
      { kind: 'card_number', count: 1 },
      { kind: 'email', count: 1 },
      { kind: 'employee_id', count: 1 },
    ]);
    const recall = await api.post(`/v1/agents/${agentId}/recall`, { query: 'Which card and e-mail did I give?' });
    const exported = await api.post(`/v1/agents/${agentId}/exports`, {});
    expect(exported.status, exported.text).toBe(202);
    let download = '';
    for (let attempt = 0; attempt < 500 && download === ''; attempt++) {
      const status = await api.get(`/v1/agents/${agentId}/exports/${exported.body.export_id}`);
      if (status.body.status === 'ready') download = (await api.get(`/v1/agents/${agentId}/exports/${exported.body.export_id}/download`)).text;
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(download).toContain('[redacted:card_number]');
    const everything = JSON.stringify([memories.body, turns.body, receipt.body, recall.body]) + download;
    for (const secret of SECRETS) expect(everything, secret).not.toContain(secret);
  });

  it('refuses a kind the server does not know with 422 invalid_request naming the kinds it does', async () => {
    const refused = await api.post('/v1/agents', { agent_config: { role: 'r', objective: 'o', extraction_policy: { redact: ['passport'] } } });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('invalid_request');
    expect(refused.body.error).toContain('card_number, email, iban, phone, employee_id');
  });

  it('serve refuses a --redact-pattern that is no NAME=REGEX (exit 2, one line)', async () => {
    for (const bad of ['employee_id', 'Bad=x', 'x=(']) {
      const result = await runCli(['serve', '--port', '0', '--data', `${server.dataDir}-never`, '--redact-pattern', bad]);
      expect({ bad, code: result.code }).toEqual({ bad, code: 2 });
      expect(result.stderr).toContain('--redact-pattern');
    }
  });
});
