import { afterAll, describe, expect, it } from 'vitest';
import { client, readLedger, readyAgent } from '../support/client.js';
import { removeDataDir, runCli, startServerProcess, type ServerProcess } from '../support/server.js';
import { filler, newThread, pollResumed, pollStatus, said, threadPaths } from './learning-support.js';

// A billed observation killed (SIGKILL) part-way through learning, resumed by the restarted server:
// its receipt (issue 33) names every turn once, and its credits match the ledger to the last decimal.
const TURNS = 40;
const CHARS = 25_000;
const BATCH_TURNS = Math.floor(256_000 / CHARS);
const CREDITS = '1000';
const servers: ServerProcess[] = [];

afterAll(async () => {
  for (const server of servers) await server.stop('SIGKILL');
  if (servers[0]) await removeDataDir(servers[0].dataDir);
});

/** A decimal string as an exact integer of 10^-30 units. */
function units(amount: string): bigint {
  const negative = amount.startsWith('-');
  const [whole, fraction = ''] = amount.replace(/^-/, '').split('.');
  const value = BigInt(whole!) * 10n ** 30n + BigInt((fraction + '0'.repeat(30)).slice(0, 30));
  return negative ? -value : value;
}

describe('a receipt across a crash', () => {
  it('after SIGKILL and resume: every turn learned once, charged once, and the receipt sums to the ledger exactly', { timeout: 600_000 }, async () => {
    const first = await startServerProcess();
    servers.push(first);
    const cli = async (...args: string[]) => {
      const result = await runCli([...args, '--data', first.dataDir, '--json']);
      if (result.code !== 0) throw new Error(`${args.join(' ')}: ${result.code} ${result.stderr}`);
      return JSON.parse(result.stdout);
    };
    const org = await cli('orgs', 'create', '--name', 'Billed', '--credits', CREDITS);
    const { key } = await cli('keys', 'create', '--org', org.organization_id);
    const api = client(first.url, key);
    const agentId = (await readyAgent(api)).agent_id;
    const threadId = await newThread(api, agentId);
    const paths = threadPaths(agentId, threadId);
    const texts = Array.from({ length: TURNS }, (_, i) => `Turn ${i + 1}. ${filler(CHARS - 10, i)}`.slice(0, CHARS));
    const accepted = await api.post(paths.observe, { observations: texts.map((text) => said(text)) });
    expect(accepted.status).toBe(202);
    const observationId: string = accepted.body.observation_id;
    const receiptPath = `${paths.thread}/observe/${observationId}/receipt`;

    const midway = await pollStatus(api, paths.status(observationId), (status) => status.turns_processed >= BATCH_TURNS || (status.status !== 'processing' && status.status !== 'queued'), { tries: 5_000 });
    expect(midway.status).toBe('processing');
    expect((await api.get(receiptPath)).status).toBe(409);
    expect(await first.stop('SIGKILL')).toBeNull();

    const second = await startServerProcess({ dataDir: first.dataDir });
    servers.push(second);
    const again = client(second.url, key);
    const done = await pollResumed(again, paths.status(observationId), [first, second]);
    expect(done).toMatchObject({ status: 'committed', turns_processed: TURNS });
    expect(done.resumed_at).not.toBeNull();

    const response = await again.get(receiptPath);
    expect(response.status).toBe(200);
    const receipt = response.body;
    expect(receipt.turns.map((turn: any) => turn.turn_index)).toEqual(texts.map((_, i) => i));
    const job = observationId.slice(4);
    for (const turn of receipt.turns) {
      expect(turn).toMatchObject({ outcome: 'learned', reason: null, superseded: [], refunded_credits: '0' });
      // Pieces 0..n-1 of this turn, each once: nothing written twice across the crash.
      expect(turn.memory_ids.length).toBeGreaterThan(0);
      expect(turn.memory_ids).toEqual(turn.memory_ids.map((_: string, piece: number) => `mem_${job}_${turn.turn_index}_${piece}`));
      // Charged once: by exactly one charge entry.
      expect(turn.ledger_entry_ids).toHaveLength(1);
      expect(units(turn.charged_credits)).toBeGreaterThan(0n);
    }

    const ledger = await readLedger(again);
    const linked = ledger.entries.filter((entry: any) => receipt.ledger_entries.some((own: any) => own.entry_id === entry.entry_id));
    expect(linked).toHaveLength(receipt.ledger_entries.length);
    for (const entry of linked as any[]) expect(receipt.ledger_entries.find((own: any) => own.entry_id === entry.entry_id).cost).toBe(entry.cost);
    const turnsNet = receipt.turns.reduce((sum: bigint, turn: any) => sum + units(turn.charged_credits) - units(turn.refunded_credits), 0n);
    const ledgerNet = linked.reduce((sum, entry) => sum + units(entry.cost), 0n);
    expect(turnsNet).toBe(ledgerNet);
    expect(units(receipt.net_credits)).toBe(ledgerNet);
    // Everything the organization spent was this job's learning (creating the agent and thread is free).
    expect(units(CREDITS) - units(ledger.balance)).toBe(ledgerNet);
    await second.stop();
  });
});
