import { describe, expect, it } from 'vitest';
import { main as embedCore } from './embed-core.js';
import { main as mountHandler } from './mount-handler.js';

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
});
