import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** How token vectors become one sentence vector (sentence-transformers' `1_Pooling/config.json`). */
export type Pooling = 'mean' | 'cls' | 'max';

/**
 * What the embedder needs to know about a model directory laid out as sentence-transformers
 * exports it (the Hugging Face hub's layout): the ONNX file, the tokenizer, the pooling and
 * normalisation the model's config names, its maximum sequence length and its vector length.
 */
export type ModelFiles = {
  dir: string;
  /** Absolute path of the ONNX graph. */
  onnx: string;
  /** `tokenizer.json` (required) and `tokenizer_config.json` (optional, `{}` when absent), parsed. */
  tokenizer: object;
  tokenizerConfig: object;
  pooling: Pooling;
  /** True when `modules.json` lists a `Normalize` module (unit-length vectors). */
  normalize: boolean;
  /** Tokens per text, special tokens included; longer texts are cut (sentence_bert_config `max_seq_length`). */
  maxLength: number;
  dimensions: number;
  /** sha256 of the ONNX file, hex: from the pull manifest when it lists the file, else computed. */
  sha256: string;
};

/** The manifest `memory-agents models pull` writes once every file of a model is in place. */
export const MANIFEST = 'memory-agents-model.json';

/** A model directory that cannot be used; the message says which file and why. */
export class ModelFilesError extends Error {
  override readonly name = 'ModelFilesError';
}

const readJson = async (path: string): Promise<Record<string, unknown> | null> => {
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new ModelFilesError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
};

/** sha256 of a file, streamed (a model file is tens to hundreds of MB). */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Reads a model directory: `model.onnx` (or `onnx/model.onnx`, or the file the pull manifest
 * names), `tokenizer.json`, and when present `tokenizer_config.json`, `config.json` (`hidden_size`),
 * `1_Pooling/config.json`, `modules.json` and `sentence_bert_config.json`. Without a pooling config
 * the pooling is mean (the sentence-transformers default); without `modules.json` vectors are
 * normalised (cosine is what the index compares, and a unit vector loses nothing for it).
 *
 * @throws ModelFilesError naming the missing or unreadable file.
 */
export async function readModelFiles(dir: string): Promise<ModelFiles> {
  if (!existsSync(dir)) throw new ModelFilesError(`The model directory ${dir} does not exist.`);
  const manifest = await readJson(join(dir, MANIFEST));
  const named = typeof manifest?.onnx === 'string' ? manifest.onnx : null;
  const candidates = named ? [named] : ['model.onnx', 'onnx/model.onnx'];
  const onnxRelative = candidates.find((file) => existsSync(join(dir, file)));
  if (!onnxRelative) throw new ModelFilesError(`${dir} holds no ONNX model (looked for ${candidates.join(', ')}).`);
  const tokenizer = await readJson(join(dir, 'tokenizer.json'));
  if (!tokenizer) throw new ModelFilesError(`${dir} holds no tokenizer.json (the model's tokenizer, as the hub serves it).`);
  const tokenizerConfig = (await readJson(join(dir, 'tokenizer_config.json'))) ?? {};
  const config = (await readJson(join(dir, 'config.json'))) ?? {};
  const poolingConfig = await readJson(join(dir, '1_Pooling', 'config.json'));
  const modules = await readJson(join(dir, 'modules.json'));
  const sentenceConfig = (await readJson(join(dir, 'sentence_bert_config.json'))) ?? {};

  const pooling: Pooling = poolingConfig?.pooling_mode_cls_token === true ? 'cls' : poolingConfig?.pooling_mode_max_tokens === true ? 'max' : 'mean';
  const normalize = Array.isArray(modules) ? modules.some((module) => typeof module === 'object' && module !== null && String((module as { type?: unknown }).type).endsWith('Normalize')) : true;
  const dimensions = Number(poolingConfig?.word_embedding_dimension ?? config.hidden_size ?? config.dim);
  if (!Number.isInteger(dimensions) || dimensions <= 0) throw new ModelFilesError(`${dir}: neither 1_Pooling/config.json (word_embedding_dimension) nor config.json (hidden_size) gives the vector length.`);
  const maxLength = Number(sentenceConfig.max_seq_length ?? (tokenizerConfig as { model_max_length?: unknown }).model_max_length ?? config.max_position_embeddings ?? 512);
  const listed = Array.isArray(manifest?.files) ? (manifest.files as { path?: unknown; sha256?: unknown }[]).find((file) => file.path === onnxRelative) : undefined;
  const onnx = join(dir, onnxRelative);
  const sha256 = typeof listed?.sha256 === 'string' ? listed.sha256 : await sha256File(onnx);
  return { dir, onnx, tokenizer, tokenizerConfig, pooling, normalize, maxLength: Math.min(Math.max(2, Math.floor(maxLength)), 8192), dimensions, sha256 };
}
