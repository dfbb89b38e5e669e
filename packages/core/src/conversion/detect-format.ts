import { ServiceError } from '../errors/index.js';
import type { DocFormat } from '../ports/document-converter.js';
import { readZipEntries } from './zip-entries.js';

/** The result of {@link detectFormat}. */
export type DetectedFormat = {
  format: DocFormat;
  mediaType: string;
  /** Programming language for `code` (from the extension or shebang), e.g. `typescript`. */
  language?: string;
};

const CODE_EXTENSIONS: Record<string, string> = {
  ts: 'typescript', tsx: 'typescript', mts: 'typescript', cts: 'typescript',
  js: 'javascript', jsx: 'javascript', mjs: 'javascript', cjs: 'javascript',
  py: 'python', pyi: 'python', rb: 'ruby', go: 'go', rs: 'rust', java: 'java', kt: 'kotlin', kts: 'kotlin',
  scala: 'scala', swift: 'swift', c: 'c', h: 'c', cc: 'cpp', cpp: 'cpp', cxx: 'cpp', hpp: 'cpp', hh: 'cpp',
  cs: 'csharp', fs: 'fsharp', php: 'php', pl: 'perl', pm: 'perl', lua: 'lua', r: 'r', jl: 'julia',
  sh: 'shell', bash: 'shell', zsh: 'shell', fish: 'shell', ps1: 'powershell', bat: 'batch', cmd: 'batch',
  sql: 'sql', dart: 'dart', ex: 'elixir', exs: 'elixir', erl: 'erlang', hs: 'haskell', ml: 'ocaml',
  clj: 'clojure', lisp: 'lisp', el: 'lisp', scm: 'scheme', vue: 'vue', svelte: 'svelte', zig: 'zig',
  nim: 'nim', m: 'objective-c', mm: 'objective-c', groovy: 'groovy', gradle: 'groovy', tf: 'hcl',
  proto: 'protobuf', graphql: 'graphql', gql: 'graphql', css: 'css', scss: 'scss', sass: 'sass', less: 'less',
  yaml: 'yaml', yml: 'yaml', toml: 'toml', ini: 'ini', xml: 'xml', dockerfile: 'dockerfile', makefile: 'makefile',
  cmake: 'cmake', asm: 'assembly', s: 'assembly', v: 'verilog', vhd: 'vhdl', sol: 'solidity',
};

const SHEBANG_LANGUAGES: Array<[RegExp, string]> = [
  [/\b(node|deno|bun)\b/, 'javascript'], [/\bts-node\b|\btsx\b/, 'typescript'], [/\bpython[0-9.]*\b/, 'python'],
  [/\bruby\b/, 'ruby'], [/\bperl\b/, 'perl'], [/\bphp\b/, 'php'], [/\b(ba|z|da|k|fi)?sh\b/, 'shell'],
];

const MEDIA_TYPES: Record<DocFormat, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  html: 'text/html',
  markdown: 'text/markdown',
  text: 'text/plain',
  code: 'text/plain',
  csv: 'text/csv',
  json: 'application/json',
};

/** Binary signatures of files this service does not convert, with a name for the error sentence. */
const BINARY_SIGNATURES: Array<{ name: string; at?: number; bytes: number[] }> = [
  { name: 'a PNG image', bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { name: 'a JPEG image', bytes: [0xff, 0xd8, 0xff] },
  { name: 'a GIF image', bytes: [0x47, 0x49, 0x46, 0x38] },
  { name: 'a TIFF image', bytes: [0x49, 0x49, 0x2a, 0x00] },
  { name: 'a TIFF image', bytes: [0x4d, 0x4d, 0x00, 0x2a] },
  { name: 'a WebP image', at: 8, bytes: [0x57, 0x45, 0x42, 0x50] },
  { name: 'a gzip archive', bytes: [0x1f, 0x8b] },
  { name: 'a bzip2 archive', bytes: [0x42, 0x5a, 0x68] },
  { name: 'an xz archive', bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00] },
  { name: 'a 7-Zip archive', bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c] },
  { name: 'a RAR archive', bytes: [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07] },
  { name: 'a Zstandard archive', bytes: [0x28, 0xb5, 0x2f, 0xfd] },
  { name: 'an executable (ELF)', bytes: [0x7f, 0x45, 0x4c, 0x46] },
  { name: 'a WebAssembly module', bytes: [0x00, 0x61, 0x73, 0x6d] },
  { name: 'a Java class file', bytes: [0xca, 0xfe, 0xba, 0xbe] },
  { name: 'an old Microsoft Office file (.doc, .xls or .ppt)', bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1] },
  { name: 'an SQLite database', bytes: [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65, 0x20, 0x66] },
  { name: 'an MP3 audio file', bytes: [0x49, 0x44, 0x33] },
  { name: 'an Ogg media file', bytes: [0x4f, 0x67, 0x67, 0x53] },
  { name: 'a FLAC audio file', bytes: [0x66, 0x4c, 0x61, 0x43] },
  { name: 'an MP4 or QuickTime video', at: 4, bytes: [0x66, 0x74, 0x79, 0x70] },
  { name: 'an RTF document', bytes: [0x7b, 0x5c, 0x72, 0x74, 0x66] },
  { name: 'a PostScript file', bytes: [0x25, 0x21, 0x50, 0x53] },
];

const OLE2_SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

/** True when `needle` occurs in `bytes` encoded as UTF-16LE (OLE2 directory entry names). */
function containsUtf16(bytes: Uint8Array, needle: string): boolean {
  const pattern = Array.from(needle).flatMap((char) => [char.charCodeAt(0), 0]);
  const first = pattern[0];
  outer: for (let at = bytes.indexOf(first ?? 0); at !== -1 && at + pattern.length <= bytes.length; at = bytes.indexOf(first ?? 0, at + 1)) {
    for (let index = 1; index < pattern.length; index++) if (bytes[at + index] !== pattern[index]) continue outer;
    return true;
  }
  return false;
}

function startsWith(bytes: Uint8Array, signature: number[], at = 0): boolean {
  if (bytes.length < at + signature.length) return false;
  return signature.every((value, index) => bytes[at + index] === value);
}

/** Lower-case extension of a file name without the dot (`'report.PDF'` -> `'pdf'`), or `''`. */
export function fileExtension(filename: string): string {
  const base = filename.split(/[\\/]/).pop() ?? '';
  const lower = base.toLowerCase();
  if (lower === 'dockerfile' || lower === 'makefile') return lower;
  const dot = lower.lastIndexOf('.');
  return dot <= 0 ? '' : lower.slice(dot + 1);
}

/** True when `%PDF-` appears in the first 1024 bytes (readers accept leading junk up to there). */
function isPdf(bytes: Uint8Array): boolean {
  const limit = Math.min(bytes.length - 5, 1024);
  for (let at = 0; at <= limit; at++) {
    if (bytes[at] === 0x25 && bytes[at + 1] === 0x50 && bytes[at + 2] === 0x44 && bytes[at + 3] === 0x46 && bytes[at + 4] === 0x2d) {
      return true;
    }
  }
  return false;
}

/**
 * Decodes document bytes as text: UTF-8 (with or without BOM) or UTF-16 with a BOM.
 * Returns `null` for bytes that are not text: invalid UTF-8, NUL bytes, or mostly control characters.
 */
export function decodeText(bytes: Uint8Array): string | null {
  let text: string;
  try {
    if (startsWith(bytes, [0xff, 0xfe])) text = new TextDecoder('utf-16le', { fatal: true }).decode(bytes.subarray(2));
    else if (startsWith(bytes, [0xfe, 0xff])) text = new TextDecoder('utf-16be', { fatal: true }).decode(bytes.subarray(2));
    else text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return null;
  }
  if (text.includes('\u0000')) return null;
  // Valid UTF-8 that is mostly C0 control characters is binary data, not prose.
  let controls = 0;
  const sample = Math.min(text.length, 65536);
  for (let index = 0; index < sample; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d && code !== 0x0c) controls++;
  }
  if (sample > 0 && controls / sample > 0.05) return null;
  return text;
}

function looksLikeHtml(text: string): boolean {
  const head = text.slice(0, 4096).replace(/^\uFEFF/, '').trimStart().toLowerCase();
  if (/^<!doctype html/.test(head) || /^<html[\s>]/.test(head)) return true;
  // Allow a leading XML declaration or comments before the root, and a `<body>` near the start.
  const stripped = head.replace(/^(<\?xml[^>]*>\s*|<!--[\s\S]*?-->\s*)+/, '');
  if (/^<!doctype html/.test(stripped) || /^<(html|head|body)[\s>]/.test(stripped)) return true;
  return /<body[\s>]/.test(head.slice(0, 1024)) && /^</.test(stripped);
}

function looksLikeJson(text: string, extension: string): boolean {
  const trimmed = text.trim();
  if (trimmed.length === 0) return false;
  const first = trimmed[0];
  if (first !== '{' && first !== '[') return false;
  try {
    JSON.parse(trimmed);
    return true;
  } catch {
    // JSON Lines: every non-empty line is a JSON value.
    if (extension !== 'jsonl' && extension !== 'ndjson') return false;
    return trimmed.split(/\r?\n/).every((line) => {
      if (line.trim() === '') return true;
      try {
        JSON.parse(line);
        return true;
      } catch {
        return false;
      }
    });
  }
}

/** Counts a delimiter outside double-quoted fields on one line. */
function countDelimiter(line: string, delimiter: string): number {
  let count = 0;
  let quoted = false;
  for (const char of line) {
    if (char === '"') quoted = !quoted;
    else if (char === delimiter && !quoted) count++;
  }
  return count;
}

function looksLikeCsv(text: string, extension: string): boolean {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '').slice(0, 50);
  if (lines.length < 2) return false;
  const candidates = extension === 'tsv' ? ['\t'] : [',', ';', '\t', '|'];
  for (const delimiter of candidates) {
    const counts = lines.map((line) => countDelimiter(line, delimiter));
    const header = counts[0] ?? 0;
    if (header < 1) continue;
    const matching = counts.filter((count) => count === header).length;
    if (matching / counts.length >= 0.9 && counts[1] === header) return true;
  }
  return false;
}

function markdownScore(text: string): number {
  const sample = text.slice(0, 20000);
  let score = 0;
  if (/^#{1,6}\s+\S/m.test(sample)) score += 2;
  if (/^\s{0,3}([-*+]|\d+[.)])\s+\S/m.test(sample)) score += 1;
  if (/\[[^\]\n]+\]\([^)\s]+\)/.test(sample)) score += 1;
  if (/^```/m.test(sample)) score += 2;
  if (/^\s{0,3}>\s+\S/m.test(sample)) score += 1;
  if (/^\|.*\|\s*$/m.test(sample) && /^\|?\s*:?-{3,}/m.test(sample)) score += 2;
  if (/(\*\*|__)[^*\n]+\1/.test(sample)) score += 1;
  if (/^[^\n]+\n(=+|-+)\s*$/m.test(sample)) score += 1;
  return score;
}

function unsupported(what: string): ServiceError {
  return new ServiceError(
    'unsupported_document',
    `This file is ${what}, which cannot be converted; send a PDF, Word (.docx), HTML, Markdown, text, source code, CSV or JSON file.`,
  );
}

/**
 * Detects the canonical format of a document from its bytes; the file name is only a hint.
 *
 * Order: binary signatures (`%PDF-` -> `pdf`; a ZIP holding `word/document.xml` -> `docx`; other
 * known binaries -> unsupported), then text sniffing of valid UTF-8/UTF-16 without NULs (HTML by its
 * root tags, JSON by parsing, code by extension or shebang, CSV by consistent delimiter counts,
 * Markdown by its syntax or a `.md` name), else `text`.
 *
 * MUST throw `ServiceError('unsupported_document')` for anything that is not one of the canonical
 * formats (images, archives, executables, other binaries, ZIPs that are not Word documents), and
 * `ServiceError('encrypted_document')` for a password-protected Office file (an OLE2 container
 * with an `EncryptedPackage` stream). MUST NOT throw anything else.
 */
export function detectFormat(bytes: Uint8Array, filename: string): DetectedFormat {
  const extension = fileExtension(filename);
  const detected = (format: DocFormat, language?: string): DetectedFormat =>
    language === undefined ? { format, mediaType: MEDIA_TYPES[format] } : { format, mediaType: MEDIA_TYPES[format], language };

  if (isPdf(bytes)) return detected('pdf');
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) || startsWith(bytes, [0x50, 0x4b, 0x05, 0x06])) {
    const entries = readZipEntries(bytes);
    const names = new Set((entries ?? []).map((entry) => entry.name));
    if (names.has('word/document.xml')) return detected('docx');
    if (names.has('xl/workbook.xml')) return unsupportedThrow('an Excel workbook (.xlsx)');
    if (names.has('ppt/presentation.xml')) return unsupportedThrow('a PowerPoint presentation (.pptx)');
    if (names.has('mimetype') && names.has('content.xml')) return unsupportedThrow('an OpenDocument file');
    return unsupportedThrow('a ZIP archive that is not a Word document');
  }
  if (startsWith(bytes, OLE2_SIGNATURE) && containsUtf16(bytes, 'EncryptedPackage')) {
    // A password-protected .docx/.xlsx/.pptx is an OLE2 container holding an "EncryptedPackage" stream.
    throw new ServiceError('encrypted_document', 'The Office document is protected by a password; remove the password and upload it again.');
  }
  for (const signature of BINARY_SIGNATURES) {
    if (startsWith(bytes, signature.bytes, signature.at ?? 0)) {
      if (signature.at === 8 && !startsWith(bytes, [0x52, 0x49, 0x46, 0x46])) continue;
      return unsupportedThrow(signature.name);
    }
  }
  const text = decodeText(bytes);
  if (text === null) return unsupportedThrow('binary data of an unrecognised type');

  if (looksLikeHtml(text)) return detected('html');
  if (extension === 'json' || extension === 'jsonl' || extension === 'ndjson' || /^\s*[{[]/.test(text)) {
    if (looksLikeJson(text, extension)) return detected('json');
  }
  const extensionLanguage = CODE_EXTENSIONS[extension];
  if (extensionLanguage !== undefined) return detected('code', extensionLanguage);
  if (text.startsWith('#!')) {
    const firstLine = text.slice(0, text.indexOf('\n') === -1 ? text.length : text.indexOf('\n'));
    const language = SHEBANG_LANGUAGES.find(([pattern]) => pattern.test(firstLine))?.[1];
    return detected('code', language ?? 'shell');
  }
  if (looksLikeCsv(text, extension)) return detected('csv');
  const isMarkdownName = extension === 'md' || extension === 'markdown' || extension === 'mdx' || extension === 'mdown';
  if (isMarkdownName || markdownScore(text) >= 3) return detected('markdown');
  if ((extension === 'htm' || extension === 'html' || extension === 'xhtml') && /<[a-z][\s\S]*>/i.test(text.slice(0, 4096))) {
    return detected('html');
  }
  return detected('text');
}

function unsupportedThrow(what: string): never {
  throw unsupported(what);
}
