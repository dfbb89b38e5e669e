#!/usr/bin/env bash
# What a user of `@memory-agents/ai-sdk` does, checked: pack it (and @memory-agents/client, its
# dependency, not on the registry yet) as npm would publish them, install the tarballs beside `ai@MAJOR`
# in an empty project with strict peer dependencies (an ERESOLVE fails it), then run the installed
# middleware around the AI SDK's own mock model (a fetch double stands in for the memory server).
# Needs `npm run build` first, and Node >= 22 for ai 7.
# Usage: bash scripts/ai-sdk-install-check.sh [MAJOR...]   (default: 6 7)
set -euo pipefail
cd "$(dirname "$0")/.."
majors=("$@"); [ ${#majors[@]} -gt 0 ] || majors=(6 7)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
npm pack --silent -w packages/client -w packages/ai-sdk --pack-destination "$work" >/dev/null
client=$(ls "$work"/memory-agents-client-*.tgz); aisdk=$(ls "$work"/memory-agents-ai-sdk-*.tgz)
for major in "${majors[@]}"; do
  app="$work/app-ai$major"; mkdir -p "$app"
  printf '{ "name": "app", "private": true, "type": "module" }\n' >"$app/package.json"
  if ! (cd "$app" && npm install --no-audit --no-fund --strict-peer-deps --loglevel=error "$client" "$aisdk" "ai@$major" >"$app/install.log" 2>&1); then
    cat "$app/install.log"; echo "ai-sdk install check: npm install @memory-agents/ai-sdk ai@$major failed" >&2; exit 1
  fi
  cat >"$app/check.mjs" <<'JS'
import { memoryMiddleware, memoryTools } from '@memory-agents/ai-sdk';
import { createClient } from '@memory-agents/client';
import { generateText, wrapLanguageModel } from 'ai';
import * as mocks from 'ai/test';
import { readFileSync } from 'node:fs';
const version = JSON.parse(readFileSync(new URL('./node_modules/ai/package.json', import.meta.url))).version;
const requests = [];
const fetch = async (input, init) => {
  const url = new URL(String(input));
  requests.push(url.pathname);
  const json = (status, value) => new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
  if (url.pathname.endsWith('/recall')) return json(200, { agent_id: 'a', memory_context: '[1] Ingrid lives in Tromsø.', citations: [], stages: [] });
  return json(202, { agent_id: 'a', thread_id: 't', observation_id: 'o', accepted: true });
};
const client = createClient({ baseUrl: 'http://memory.test', apiKey: 'sp_k_x', fetch });
const Mock = mocks.MockLanguageModelV4 ?? mocks.MockLanguageModelV3;
const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } };
const model = new Mock({ doGenerate: async () => ({ content: [{ type: 'text', text: 'In Tromsø.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }) });
const middleware = memoryMiddleware({ client, agentId: 'agent_x', threadId: 'thread_x' });
const { text } = await generateText({ model: wrapLanguageModel({ model, middleware }), prompt: 'Where does Ingrid live?' });
await middleware.flush();
// Recalled memory arrives as fenced data in a user message, never in a system message (issue 33).
const prompt = model.doGenerateCalls[0].prompt;
const said = (m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
const inUser = prompt.some((m) => m.role === 'user' && said(m).includes('Ingrid lives in Tromsø.') && said(m).includes('<memory-data id='));
const inSystem = prompt.some((m) => m.role === 'system' && said(m).includes('Ingrid lives in Tromsø.'));
if (text !== 'In Tromsø.' || !inUser || inSystem || !requests.some((p) => p.endsWith('/observe'))) {
  throw new Error(`ai ${version}: the middleware did not recall and observe (${JSON.stringify({ text, requests })})`);
}
if (Object.keys(memoryTools({ client, agentId: 'agent_x' })).length === 0) throw new Error('memoryTools returned no tools');
console.log(`ai-sdk install check: @memory-agents/ai-sdk with ai ${version} (${Mock.name}) on Node ${process.versions.node}: ok`);
JS
  (cd "$app" && node check.mjs)
done
