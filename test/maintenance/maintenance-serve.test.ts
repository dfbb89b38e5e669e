import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeDataDir, runCli, startServerProcess } from '../support/server.js';

// The idle maintenance schedule's serve flags (issue 43): a server starts with them, and limits
// given without `--maintenance-idle-minutes`, or out of range, are refused before it starts.

describe('serve --maintenance-idle-minutes', () => {
  it('starts with a schedule, and refuses limits alone or out of range with one line', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ma-e2e-'));
    const server = await startServerProcess({ dataDir, args: ['--data', dataDir, '--maintenance-idle-minutes', '30', '--maintenance-kinds', 'merge_duplicates,sweep_expired', '--maintenance-max-runs-per-day', '2', '--maintenance-max-memories', '50'] });
    expect(server.url).toMatch(/^http:\/\//);
    const code = await server.stop();
    expect(code, `serve ended by ${server.child.signalCode ?? 'its own exit'}:\n${server.output()}`).toBe(0);
    const refused: [string[], string][] = [
      [['--maintenance-kinds', 'merge_duplicates'], '--maintenance-kinds needs --maintenance-idle-minutes'],
      [['--maintenance-idle-minutes', '0'], '--maintenance-idle-minutes takes a number above 0'],
      [['--maintenance-idle-minutes', 'soon'], '--maintenance-idle-minutes takes a number above 0'],
      [['--maintenance-idle-minutes', '5', '--maintenance-max-runs-per-day', 'many'], '--maintenance-max-runs-per-day takes a number above 0'],
    ];
    for (const [flags, said] of refused) {
      const result = await runCli(['serve', '--port', '0', '--data', `${dataDir}-never`, ...flags]);
      expect({ flags, code: result.code }).toEqual({ flags, code: 2 });
      expect(result.stderr).toContain(said);
    }
    // A kind the schedule may not run (a new policy reaches old memories only when a person applies it).
    const policy = await runCli(['serve', '--port', '0', '--data', dataDir, '--maintenance-idle-minutes', '5', '--maintenance-kinds', 'reapply_policy']);
    expect(policy.code).not.toBe(0);
    expect(policy.stderr).toContain('maintenance.schedule.kinds must name some of merge_duplicates, supersede_history, sweep_expired, got reapply_policy');
    await removeDataDir(dataDir);
  });
});
