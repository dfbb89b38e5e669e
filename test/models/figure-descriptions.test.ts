import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../support/client.js';
import { removeDataDir, startServerProcess, type ServerProcess } from '../support/server.js';
import { agentWithThread, fixture, postForm, settle, SHARED_DOCS } from '../documents/document-support.js';
import { API_KEY, chatRequests, modelArgs, obedientModel, startScriptedOpenaiServer, systemPrompt, userPrompt, type ScriptedOpenaiServer } from './model-support.js';

/**
 * Figure descriptions with a configured (vision-capable) model, over real HTTP: the built CLI
 * server sends each kept figure of tracemonkey.pdf to the scripted provider as an image part; a
 * description lands in the figure's turn, and a figure whose call fails keeps caption + OCR text.
 */
let provider: ScriptedOpenaiServer;
let server: ServerProcess;
let api: Client;

const isDescribe = (body: { messages?: { role: string; content: unknown }[] }) => systemPrompt({ body }).startsWith('You describe figures');

beforeAll(async () => {
  provider = await startScriptedOpenaiServer({
    fallback: {
      chat: {
        type: 'compute',
        reply: (body) => {
          if (!isDescribe(body)) return obedientModel(body);
          const user = userPrompt({ body });
          if (user.includes('Figure 2. State machine')) return { type: 'answer', text: 'A flowchart of zebracorn activities: interpret, monitor, record, compile.' };
          if (user.includes('Figure 10.')) return { type: 'status', status: 500 };
          return { type: 'answer', text: 'A chart from the paper.' };
        },
      },
    },
  });
  const dataDir = await mkdtemp(join(tmpdir(), 'ma-e2e-figures-'));
  server = await startServerProcess({ dataDir, args: ['--data', dataDir, ...modelArgs(provider)], env: { MEMORY_AGENTS_MODEL_API_KEY: API_KEY } });
  api = client(server.url, server.key);
});
afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
  await provider?.close();
});

describe('figure descriptions by the configured model', () => {
  it.skipIf(!SHARED_DOCS)('describes each kept figure of tracemonkey.pdf (image parts, one call each); a failed call falls back and the upload still commits', async () => {
    const person = { 'x-sp-end-user': 'figure-reader' };
    const { paths } = await agentWithThread(api, person);
    const accepted = await postForm(server.url, server.key!, paths.observeFile, { data: fixture('tracemonkey.pdf'), filename: 'tracemonkey.pdf' }, {}, person, { ownConnection: true });
    expect(accepted.status, accepted.text).toBe(202);
    expect(accepted.body.figures).toBeGreaterThan(1);
    expect(await settle(api, paths.status(accepted.body.observation_id), person, undefined, 200)).toMatchObject({ status: 'committed' });

    const describes = chatRequests(provider).filter((request) => isDescribe(request.body));
    const captions = new Set(describes.map((request) => /Caption: (Figure \d+)/.exec(userPrompt(request))?.[1] ?? userPrompt(request)));
    expect(captions.size).toBe(accepted.body.figures);
    for (const request of describes) {
      const parts = request.body.messages.at(-1).content;
      expect(parts.some((part: { type: string; image_url?: { url: string } }) => part.type === 'image_url' && part.image_url!.url.startsWith('data:image/png;base64,'))).toBe(true);
    }

    const chat = await api.post(paths.chat, { turn_id: 'fig-1', message: 'Which zebracorn activities does the flowchart show?' }, { headers: person });
    expect(chat.status, chat.text).toBe(200);
    const answerPrompt = userPrompt(chatRequests(provider).at(-1)!);
    expect(answerPrompt).toMatch(/\[Figure \(page 2\): Figure 2\. State machine [^\]]*\. Description: A flowchart of zebracorn activities: interpret, monitor, record, compile[.\]]/);

    const speedup = await api.post(paths.chat, { turn_id: 'fig-2', message: 'Speedup vs. a baseline JavaScript interpreter figure' }, { headers: person });
    expect(speedup.status, speedup.text).toBe(200);
    const figure10 = /\[Figure \(page \d+\): Figure 10\. Speedup[^\]]*\]/.exec(userPrompt(chatRequests(provider).at(-1)!))?.[0];
    expect(figure10).toBeDefined();
    expect(figure10).not.toContain('Description:');
  });
});
