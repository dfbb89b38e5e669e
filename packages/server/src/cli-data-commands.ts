import { existsSync } from 'node:fs';
import { isServiceError } from '@memory-agents/core';
import { stateLocation, UsageError, type CliValues } from './cli-options.js';
import { CliError, print, requireStoppedServer, type CliIo } from './cli-support.js';
import { modelSettings } from './model-options.js';
import { dataPaths, DEFAULT_DATA_DIR } from './paths.js';

// The commands that move an agent's data: `migrate` (a data dir into PostgreSQL), `export`, `import`.

/** `memory-agents migrate`: a data dir into PostgreSQL, then its verification report. */
export async function migrateCommand(values: CliValues, io: CliIo): Promise<number> {
  if (!values.to || !/^postgres(ql)?:\/\//.test(values.to)) throw new UsageError('migrate needs --to postgres://... (the PostgreSQL database to move the data dir into)', 'migrate');
  const dataDir = values.data ?? DEFAULT_DATA_DIR;
  if (!existsSync(dataPaths(dataDir).pgdata)) throw new CliError('not_found', `no data dir at ${dataPaths(dataDir).root}`);
  await requireStoppedServer({ dataDir }, 'migrate');
  const { resolve } = await import('node:path');
  const { migrateDataDir, MigrationRefused } = await import('./migrate.js');
  const report = await migrateDataDir({
    dataDir,
    databaseUrl: values.to,
    blobsDirectory: resolve(values.blobs ?? dataPaths(DEFAULT_DATA_DIR).blobs),
    log: (line) => io.stderr(`memory-agents: ${line}\n`),
  }).catch((error: unknown) => {
    if (error instanceof MigrationRefused) throw new CliError('conflict', error.message);
    throw error;
  });
  if (values.json === true) io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  else {
    io.stdout(`organizations=${report.organizations}  agents_moved=${report.agents}  resumed=${report.resumed}  blobs=${report.blobsDirectory}\n`);
    for (const c of report.checks) io.stdout(`${c.ok ? 'ok      ' : 'MISMATCH'}  ${c.what}: ${c.source} -> ${c.target}\n`);
    io.stdout(`searches: ${report.searches.matched} of ${report.searches.checked} give the same top hit\n${report.ok ? 'verified' : 'NOT verified'}\n`);
  }
  return report.ok ? 0 : 1;
}


/** `memory-agents export`: the agent's lines on stdout. */
export async function exportCommand(values: CliValues, io: CliIo): Promise<number> {
  const agentId = values.agent;
  if (!agentId) throw new UsageError('export needs --agent AGENT_ID', 'export');
  const location = stateLocation(values, 'export');
  await requireStoppedServer(location, 'export');
  const { exportToStream } = await import('./transfer-commands.js');
  const write = io.stdoutAsync ?? (async (text: string) => io.stdout(text));
  try {
    await exportToStream(location, { agentId, vectors: values['no-vectors'] !== true, ...(values.org === undefined ? {} : { organizationId: values.org }) }, write);
  } catch (error) {
    if (isServiceError(error)) throw new CliError(error.code, error.message);
    throw error;
  }
  return 0;
}

/** Memories between two progress lines of `memory-agents import`. */
const PROGRESS_STEP = 1000;

/** `memory-agents import`: a file (or stdin) into an organization as a new agent. */
export async function importCommand(values: CliValues, io: CliIo): Promise<number> {
  const organizationId = values.org;
  if (!organizationId) throw new UsageError('import needs --org ORG_ID (the organization the agent goes into)', 'import');
  const location = stateLocation(values, 'import');
  if (values.file !== undefined && !existsSync(values.file)) throw new CliError('not_found', `no file ${values.file}`);
  const models = modelSettings(values, io.env);
  await requireStoppedServer(location, 'import');
  const { importFromFile } = await import('./transfer-commands.js');
  const { createServiceModels } = await import('./model-options.js');
  try {
    // A long import says how far it is, every PROGRESS_STEP memories (on stderr; stdout is the result).
    let said = 0;
    const onProgress = ({ agentId, memories, totalMemories }: { agentId: string; memories: number; totalMemories: number }) => {
      if (memories - said < PROGRESS_STEP) return;
      said = memories;
      io.stderr(`memory-agents: import: agent ${agentId}: ${memories} of ${totalMemories} memories written\n`);
    };
    const result = await importFromFile(location, { organizationId, file: values.file ?? io.stdin ?? process.stdin, onProgress }, await createServiceModels(models, io.env));
    print(
      {
        agent_id: result.agentId,
        organization_id: result.organizationId,
        from_agent_id: result.fromAgentId,
        threads: result.counts.thread,
        observations: result.counts.job,
        memories: result.counts.memory,
        sources: result.counts.source,
        reembedded: result.reembedded,
        ledger_entries_skipped: result.ledgerEntriesSkipped,
      },
      values.json === true,
      io,
    );
  } catch (error) {
    if (isServiceError(error)) throw new CliError(error.code, error.message);
    throw error;
  }
  return 0;
}
