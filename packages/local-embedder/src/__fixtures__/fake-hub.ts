import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

// A local stand-in for the Hugging Face hub, laid out like it: `/{owner}/{name}/resolve/{revision}/{path}`
// answers a git file with 200 and its git blob sha1 as ETag, and an LFS file with a 302 to
// `/cdn/...` carrying X-Linked-Etag (sha256) and X-Linked-Size; both carry X-Repo-Commit. The CDN
// honours `Range: bytes=N-`. Modes cut a response half-way or corrupt a file's bytes.

/** One file of a fake repository. */
export type FakeHubFile = { content: Buffer; lfs?: boolean };

/** A fake repository: its commit (`main` points at it), its files by path, and whether it needs the token. */
export type FakeHubRepo = { commit: string; files: Record<string, FakeHubFile>; gated?: boolean };

/** One request the fake hub answered, and how many body bytes it sent. */
export type FakeHubRequest = { method: string; path: string; file: string; range: string | null; authorization: string | null; status: number; bytes: number };

export type FakeHub = {
  /** The endpoint, like http://127.0.0.1:PORT. */
  url: string;
  requests: FakeHubRequest[];
  repos: Record<string, FakeHubRepo>;
  /** The next response with the file's bytes sends only `bytes` of them, then the connection is cut. */
  cutNext(path: string, bytes: number): void;
  /** The next response with the file's bytes sends only `bytes` of them, then sends nothing more and keeps the connection open. */
  stallNext(path: string, bytes: number): void;
  /** Files (by path) served with one byte changed, at the same length. */
  corrupt: Set<string>;
  /** The requests that sent a file's bytes (a GET with a body), CDN included. */
  contentRequests(path: string): FakeHubRequest[];
  close(): Promise<void>;
};

/** A git blob's sha1: sha1 of `blob <size>\0` followed by the bytes, as git and the hub's ETag compute it. */
export function gitBlobSha1(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

export function sha256(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** The repositories by `owner/name`, the bearer a gated one accepts, and old names redirected to new ones (a rename). */
export type FakeHubOptions = { repos: Record<string, FakeHubRepo>; token?: string; renamed?: Record<string, string> };

/** Starts the fake hub on a loopback port; `token` is the bearer a gated repository accepts. */
export async function startFakeHub(options: FakeHubOptions): Promise<FakeHub> {
  const requests: FakeHubRequest[] = [];
  const cuts = new Map<string, number>();
  const corrupt = new Set<string>();
  const stalls = new Set<string>();
  const server = createServer((request, response) => {
    const entry: FakeHubRequest = { method: request.method ?? 'GET', path: request.url ?? '/', file: (request.url ?? '/').split('?')[0]!.split('/').slice(5).map(decodeURIComponent).join('/'), range: request.headers.range ?? null, authorization: request.headers.authorization ?? null, status: 0, bytes: 0 };
    requests.push(entry);
    const answer = (status: number, headers: Record<string, string | number> = {}, body?: Buffer, cutAfter?: number) => {
      entry.status = status;
      response.writeHead(status, headers);
      if (body === undefined || request.method === 'HEAD') return void response.end();
      if (cutAfter === undefined) {
        entry.bytes = body.length;
        return void response.end(body);
      }
      entry.bytes = cutAfter;
      if (stalls.delete(entry.file)) return void response.write(body.subarray(0, cutAfter));
      response.write(body.subarray(0, cutAfter), () => response.socket?.destroy());
    };
    serve(options, request, entry, corrupt, cuts, answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    repos: options.repos,
    corrupt,
    cutNext: (path, bytes) => void cuts.set(path, bytes),
    stallNext: (path, bytes) => {
      cuts.set(path, bytes);
      stalls.add(path);
    },
    contentRequests: (path) => requests.filter((item) => item.method === 'GET' && item.bytes > 0 && item.file === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Answer = (status: number, headers?: Record<string, string | number>, body?: Buffer, cutAfter?: number) => void;

function serve(options: FakeHubOptions, request: IncomingMessage, entry: FakeHubRequest, corrupt: Set<string>, cuts: Map<string, number>, answer: Answer): void {
  const url = new URL(request.url ?? '/', 'http://hub');
  const segments = url.pathname.split('/').slice(1).map(decodeURIComponent);
  const isCdn = segments[0] === 'cdn';
  const [owner, name, kind, revision, ...rest] = isCdn ? [segments[1], segments[2], 'resolve', segments[3], ...segments.slice(4)] : segments;
  const renamed = options.renamed?.[`${owner}/${name}`];
  if (renamed !== undefined && !isCdn) return answer(307, { location: url.pathname.replace(`/${owner}/${name}/`, `/${renamed}/`) });
  const repo = options.repos[`${owner}/${name}`];
  if (kind !== 'resolve' || repo === undefined) return answer(401, { 'x-error-code': 'RepoNotFound' });
  if (repo.gated && entry.authorization !== `Bearer ${options.token}`) return answer(401, { 'x-error-code': 'GatedRepo' });
  if (revision !== 'main' && revision !== repo.commit) return answer(404, { 'x-error-code': 'RevisionNotFound' });
  const path = rest.join('/');
  const file = repo.files[path];
  if (file === undefined) return answer(404, { 'x-error-code': 'EntryNotFound', 'x-repo-commit': repo.commit });
  if (file.lfs && !isCdn) {
    return answer(302, {
      location: `/cdn/${owner}/${name}/${repo.commit}/${path}`,
      'x-linked-etag': `"${sha256(file.content)}"`,
      'x-linked-size': file.content.length,
      'x-repo-commit': repo.commit,
      etag: `"${sha256(file.content)}"`,
    });
  }
  let content = file.content;
  if (corrupt.has(path)) {
    content = Buffer.from(content);
    content[content.length >> 1] = content[content.length >> 1]! ^ 0xff;
  }
  const headers: Record<string, string | number> = isCdn ? { 'accept-ranges': 'bytes' } : { etag: `"${gitBlobSha1(file.content)}"`, 'x-repo-commit': repo.commit, 'accept-ranges': 'bytes' };
  const range = /^bytes=(\d+)-$/.exec(entry.range ?? '');
  const start = range ? Number(range[1]) : 0;
  if (start >= content.length && range) return answer(416, { ...headers, 'content-range': `bytes */${content.length}` });
  const body = content.subarray(start);
  const cut = request.method === 'GET' ? cuts.get(path) : undefined;
  if (cut !== undefined) cuts.delete(path);
  const status = range ? 206 : 200;
  answer(status, { ...headers, 'content-length': body.length, ...(range ? { 'content-range': `bytes ${start}-${content.length - 1}/${content.length}` } : {}) }, body, cut === undefined ? undefined : Math.min(cut, body.length));
}
