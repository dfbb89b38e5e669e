import { describe, expect, it } from 'vitest';
import { COMMANDS } from './cli-main.js';
import { runMain as run } from './cli-test-support.js';


describe('the CLI command table', () => {
  it('refuses an option the command does not take as a usage error (exit 2, one line and where to read more)', async () => {
    for (const [argv, command, flag] of [
      [['keys', 'list', '--port', '1'], 'keys list', '--port'],
      [['orgs', 'list', '--org', 'org_x'], 'orgs list', '--org'],
      [['mcp', '--agent', 'a', '--data', '/tmp/x'], 'mcp', '--data'],
      [['serve', '--name', 'x'], 'serve', '--name'],
      [['keys', 'revoke', '--key-id', 'k', '--amount', '3'], 'keys revoke', '--amount'],
    ] as const) {
      const result = await run([...argv]);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n')).toEqual([`memory-agents: ${command} does not take ${flag}`, `Run "memory-agents help ${command}" for usage.`]);
    }
    const json = await run(['keys', 'list', '--port', '1', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toEqual({ error: 'keys list does not take --port', code: 'usage' });
  });

  it('refuses a --webhooks-allow-hosts entry that is not a host name, an IP or a CIDR range before starting anything', async () => {
    for (const value of ['10.0.0.0/99', 'hooks.internal/8', '10.0.0.0/8/1']) {
      const result = await run(['serve', '--data', '/nonexistent/never-created', '--webhooks-allow-hosts', value]);
      expect(result.code, value).toBe(2);
      expect(result.stderr, value).toContain(`--webhooks-allow-hosts: ${value} is not a host name, an IP or a CIDR range`);
    }
  });

  it('prints each command’s own usage for help COMMAND and COMMAND --help, naming exactly the options it takes', async () => {
    for (const [name, command] of Object.entries(COMMANDS)) {
      const help = await run(['help', ...name.split(' ')]);
      expect(help.code, name).toBe(0);
      expect(help.stdout, name).toMatch(new RegExp(`^Usage: memory-agents ${name}( |$)`, 'm'));
      expect(help.stdout.match(/^Usage: /gm), name).toHaveLength(1);
      expect((await run([...name.split(' '), '--help'])).stdout, name).toBe(help.stdout);
      // Every option the usage line names is one the command takes.
      const named = [...command.usage.split('\n')[0]!.matchAll(/--([a-z-]+)/g)].map((match) => match[1]);
      for (const option of named) if (option !== 'json') expect(command.options, `${name} --${option}`).toContain(option);
    }
    const overview = await run(['help']);
    expect(overview.code).toBe(0);
    for (const name of Object.keys(COMMANDS)) expect(overview.stdout).toContain(`memory-agents ${name}`);
  });

  it('answers an unknown command, an unknown group action and help on an unknown topic with a usage error', async () => {
    const unknown = await run(['frobnicate']);
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toBe('memory-agents: unknown command: frobnicate\nRun "memory-agents help" for usage.\n');
    const action = await run(['keys', 'rotate']);
    expect(action.code).toBe(2);
    expect(action.stderr).toBe('memory-agents: keys needs one of: create, list, revoke\nRun "memory-agents help keys" for usage.\n');
    const topic = await run(['help', 'frobnicate']);
    expect(topic.code).toBe(2);
    expect(topic.stderr).toContain('no command "frobnicate"');
  });

  it('checks an admin command’s flags before touching any state', async () => {
    const missing = await run(['keys', 'create']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('memory-agents: keys create needs --org ORG_ID\nRun "memory-agents help keys create" for usage.\n');
    const both = await run(['orgs', 'list', '--data', '/nonexistent/a', '--database-url', 'postgres://x']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('pass either --data or --database-url, not both');
  });

  it('serve --metrics needs an address of its own or a token, and checks both (exit 2 before anything starts)', async () => {
    const cases: [string[], string][] = [
      [['serve', '--metrics'], '--metrics needs its own address (--metrics-listen 127.0.0.1:9464) or a bearer token'],
      [['serve', '--metrics-listen', '127.0.0.1:9464'], '--metrics-listen and --metrics-token go with --metrics'],
      [['serve', '--metrics', '--metrics-listen', '9464'], '--metrics-listen must be HOST:PORT, like 127.0.0.1:9464, not "9464"'],
      [['serve', '--metrics', '--metrics-listen', 'localhost:70000'], '--metrics-listen must be HOST:PORT'],
      [['serve', '--metrics', '--metrics-token', 'short'], 'the metrics token must be at least 16 characters'],
    ];
    for (const [argv, message] of cases) {
      const result = await run(['serve', '--data', '/nonexistent/metrics-cli', ...argv.slice(1)]);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr, argv.join(' ')).toContain(message);
    }
  });
});
