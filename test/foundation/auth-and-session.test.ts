import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, errorShape, type Client } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';

let server: ServerProcess;
let api: Client;

beforeAll(async () => {
  server = await startServerProcess();
  api = client(server.url, server.key);
});
afterAll(async () => {
  await server.stop();
  await removeDataDir(server.dataDir);
});

describe('authentication', () => {
  const ERROR_KEYS = ['code', 'error', 'request_id'];

  it('answers 401 unauthorized alike for a missing, malformed, unknown or wrong-secret key', async () => {
    const key = server.key!;
    const [, keyId] = /^sp_(k[0-9a-f]{20})_/.exec(key)!;
    const tokens: (string | null)[] = [
      null,
      'not-a-key',
      'sp_short_secret',
      `sp_k${'0'.repeat(20)}_${'a'.repeat(64)}`,
      `sp_${keyId}_${'b'.repeat(64)}`,
      `${key}x`,
    ];
    for (const token of tokens) {
      const response = await api.get('/v1/session', { key: token });
      expect(errorShape(response)).toEqual({ status: 401, code: 'unauthorized', keys: ERROR_KEYS, requestIdMatches: true });
    }
    const basic = await api.get('/v1/session', { key: null, headers: { authorization: `Basic ${key}` } });
    expect(basic.status).toBe(401);
  });

  it('refuses a keyed request carrying Sec-Fetch-Site with 400 invalid_request', async () => {
    const response = await api.get('/v1/session', { headers: { 'sec-fetch-site': 'cross-site' } });
    expect(errorShape(response)).toEqual({ status: 400, code: 'invalid_request', keys: ERROR_KEYS, requestIdMatches: true });
  });

  it('never sends CORS headers, even to a request with an Origin', async () => {
    const response = await api.get('/v1/session', { headers: { origin: 'https://example.com' } });
    expect(response.status).toBe(200);
    for (const [name] of response.headers) expect(name.startsWith('access-control-')).toBe(false);
    const preflight = await api.call('OPTIONS', '/v1/session', { headers: { origin: 'https://example.com' } });
    expect(preflight.status).toBe(405);
    for (const [name] of preflight.headers) expect(name.startsWith('access-control-')).toBe(false);
  });

  it('takes a revocation into effect on the very next request, through the running server', async () => {
    const org = JSON.parse((await runCli(['orgs', 'create', '--name', 'Revokers', '--data', server.dataDir, '--json'])).stdout);
    const created = JSON.parse((await runCli(['keys', 'create', '--org', org.organization_id, '--data', server.dataDir, '--json'])).stdout);
    expect(created).toMatchObject({ organization_id: org.organization_id, key_id: expect.stringMatching(/^k[0-9a-f]{20}$/) });
    expect(created.key.startsWith(`sp_${created.key_id}_`)).toBe(true);
    expect((await api.get('/v1/session', { key: created.key })).status).toBe(200);
    const revoked = await runCli(['keys', 'revoke', '--key-id', created.key_id, '--data', server.dataDir, '--json']);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ key_id: created.key_id, status: 'revoked' });
    expect((await api.get('/v1/session', { key: created.key })).status).toBe(401);
  });

  it('allows 5 live keys per organization and answers conflict for the sixth', async () => {
    const org = JSON.parse((await runCli(['orgs', 'create', '--name', 'Keyholders', '--data', server.dataDir, '--json'])).stdout);
    const keys = [];
    for (let i = 0; i < 5; i++) {
      const result = await runCli(['keys', 'create', '--org', org.organization_id, '--data', server.dataDir, '--json']);
      expect(result.code).toBe(0);
      keys.push(JSON.parse(result.stdout));
    }
    const sixth = await runCli(['keys', 'create', '--org', org.organization_id, '--data', server.dataDir, '--json']);
    expect(sixth.code).toBe(1);
    expect(JSON.parse(sixth.stderr)).toEqual({ error: expect.stringContaining('5 live keys'), code: 'conflict' });
    await runCli(['keys', 'revoke', '--key-id', keys[0].key_id, '--data', server.dataDir]);
    expect((await runCli(['keys', 'create', '--org', org.organization_id, '--data', server.dataDir, '--json'])).code).toBe(0);
    const listed = JSON.parse((await runCli(['keys', 'list', '--org', org.organization_id, '--data', server.dataDir, '--json'])).stdout);
    expect(listed).toHaveLength(6);
    expect(listed.filter((k: { status: string }) => k.status === 'live')).toHaveLength(5);
    expect(JSON.stringify(listed)).not.toMatch(/sp_k/);
  });
});

describe('X-SP-End-User', () => {
  it('derives one eu_ id per trimmed value and organization', async () => {
    const a = await api.get('/v1/session', { headers: { 'x-sp-end-user': 'alice@example.com' } });
    const padded = await api.get('/v1/session', { headers: { 'x-sp-end-user': '  alice@example.com  ' } });
    const b = await api.get('/v1/session', { headers: { 'x-sp-end-user': 'bob' } });
    expect(a.body.user.id).toMatch(/^eu_[0-9a-f]{32}$/);
    expect(padded.body.user.id).toBe(a.body.user.id);
    expect(b.body.user.id).not.toBe(a.body.user.id);
    expect(JSON.stringify(a.body)).not.toContain('alice');
  });

  it('accepts 255 characters as sent and refuses 256 with 400', async () => {
    expect((await api.get('/v1/session', { headers: { 'x-sp-end-user': 'x'.repeat(255) } })).status).toBe(200);
    const long = await api.get('/v1/session', { headers: { 'x-sp-end-user': 'x'.repeat(256) } });
    expect(errorShape(long)).toMatchObject({ status: 400, code: 'invalid_request' });
    // Measured as sent: inner whitespace counts toward the limit.
    expect((await api.get('/v1/session', { headers: { 'x-sp-end-user': `a${' '.repeat(254)}b` } })).status).toBe(400);
  });

  it('refuses an empty or whitespace value with 400 rather than reading it as absent', async () => {
    for (const value of ['', '   ']) {
      const response = await api.get('/v1/session', { headers: { 'x-sp-end-user': value } });
      expect(errorShape(response)).toMatchObject({ status: 400, code: 'invalid_request' });
    }
  });
});

describe('GET /v1/session', () => {
  it('returns exactly the spec fields with the default limits', async () => {
    const response = await api.get('/v1/session');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      authenticated: true,
      user: { id: expect.stringMatching(/^org_/), email: '', display_name: 'partner key' },
      organization_id: response.body.user.id,
      organization_name: 'Default organization',
      max_upload_bytes: 10485760,
      max_image_bytes: 10485760,
      max_images_per_turn: 10,
      max_image_bytes_per_turn: 33554432,
    });
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  });
});

describe('HTTP conventions', () => {
  it('answers unknown routes with 404 JSON and wrong methods with 405 and Allow', async () => {
    const missing = await api.get('/v1/nothing-here');
    expect(errorShape(missing)).toMatchObject({ status: 404, code: 'not_found', requestIdMatches: true });
    const wrong = await api.call('PUT', '/v1/agents');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST, GET');
    expect(wrong.body.code).toBe('method_not_allowed');
  });

  it('answers malformed JSON with 400 invalid_request', async () => {
    const response = await api.call('POST', '/v1/agents', { rawBody: '{"agent_config": ' });
    expect(errorShape(response)).toMatchObject({ status: 400, code: 'invalid_request' });
  });

  it('serves an OpenAPI 3.1 document generated from the route table', async () => {
    const response = await api.get('/v1/openapi.json', { key: null });
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    expect(Object.keys(response.body.paths)).toEqual(
      expect.arrayContaining(['/v1/session', '/v1/agents', '/v1/agents/{agent_id}', '/v1/agents/{agent_id}/threads/{thread_id}', '/v1/agents/{agent_id}/logs']),
    );
    expect(response.body.components.schemas.Agent.properties.agent_config.$ref).toBe('#/components/schemas/AgentConfig');
    expect(response.body.components.schemas.AgentConfig.properties.role).toMatchObject({ minLength: 1, maxLength: 200 });
    expect(response.body.paths['/v1/agents'].post.responses['409'].description).toContain('agent_quota_exceeded');
  });
});
