import type { PullProgress } from '@memory-agents/local-embedder';
import { UsageError, type CliValues } from './cli-options.js';
import { CliError, print, type CliIo } from './cli-support.js';

// The commands that manage local embedding models: `models pull` (from the Hugging Face hub into
// the model cache) and `models list`. The package is imported when a command runs, so `help` and
// the other commands never load it.

/** `memory-agents models pull NAME`: the model's files into the cache; its directory on stdout, progress on stderr. */
export async function modelsPullCommand(values: CliValues, io: CliIo, args: readonly string[]): Promise<number> {
  const name = args[0];
  if (name === undefined) throw new UsageError('models pull needs NAME, a Hugging Face model id like sentence-transformers/all-MiniLM-L6-v2', 'models pull');
  const { isModelName, isPullError, pullModel } = await import('@memory-agents/local-embedder');
  if (!isModelName(name)) throw new UsageError(`"${name}" is not a Hugging Face model id: expected owner/name, like sentence-transformers/all-MiniLM-L6-v2`, 'models pull');
  const json = values.json === true;
  // Ctrl-C stops the download between two chunks: what arrived is kept, and the same command resumes it.
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.once('SIGINT', onSigint);
  try {
    const result = await pullModel({
      name,
      env: io.env,
      signal: controller.signal,
      ...(values.file === undefined ? {} : { file: values.file }),
      ...(values.revision === undefined ? {} : { revision: values.revision }),
      ...(values.endpoint === undefined ? {} : { endpoint: values.endpoint }),
      ...(values.force === true ? { force: true } : {}),
      ...(json ? {} : { onProgress: progressPrinter(io) }),
    });
    if (json) {
      io.stdout(`${JSON.stringify({ name, dir: result.dir, commit: result.commit, up_to_date: result.upToDate, files: result.files }, null, 2)}\n`);
    } else {
      const commit = result.commit === null ? '' : ` (commit ${result.commit.slice(0, 12)})`;
      io.stderr(`memory-agents: ${result.upToDate ? `${name} is up to date${commit}; nothing downloaded (--force downloads it again)` : `pulled ${name}${commit}`}\n`);
      io.stdout(`${result.dir}\n`);
    }
    return 0;
  } catch (error) {
    if (controller.signal.aborted) throw new CliError('interrupted', `the pull of ${name} was stopped; what arrived is kept, and the same command resumes it`);
    if (isPullError(error)) throw new CliError(error.code, error.message);
    throw error;
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}

/** `memory-agents models list`: the models in the cache, with their ONNX file and size. */
export async function modelsListCommand(values: CliValues, io: CliIo): Promise<number> {
  const { listModels } = await import('@memory-agents/local-embedder');
  const rows = (await listModels(io.env)).map((model) =>
    model.complete
      ? { name: model.manifest.name, status: 'complete', onnx: model.manifest.onnx, size: values.json ? model.size : formatBytes(model.size), commit: model.manifest.commit, pulled_at: model.manifest.pulledAt, dir: model.dir }
      : { name: model.name, status: 'incomplete', onnx: null, size: null, commit: null, pulled_at: null, dir: model.dir },
  );
  print(rows, values.json === true, io);
  return 0;
}

/**
 * Progress on stderr: a line when a file is complete, a line per 10% reached of a large file
 * (at most nine per file), and where a resumed download starts.
 */
function progressPrinter(io: CliIo): (progress: PullProgress) => void {
  let current: string | null = null;
  let reached = 0;
  const done = new Set<string>();
  return ({ file, received, total }) => {
    if (done.has(file)) return;
    if (file !== current) {
      current = file;
      reached = total === null ? 0 : Math.floor((received * 10) / total);
      if (received > 0 && total !== null && received < total) io.stderr(`memory-agents: ${file}: resuming at ${reached * 10}% of ${formatBytes(total)}\n`);
    }
    if (total !== null && received >= total) {
      done.add(file);
      io.stderr(`memory-agents: ${file} ${formatBytes(total)}\n`);
      return;
    }
    const tenth = total === null || total < 1_000_000 ? 0 : Math.floor((received * 10) / total);
    if (tenth > reached && tenth < 10) {
      reached = tenth;
      io.stderr(`memory-agents: ${file} ${tenth * 10}% of ${formatBytes(total!)}\n`);
    }
  };
}

/** 1234567 -> "1.2MB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes}B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(1)}${units[unit]}`;
}
