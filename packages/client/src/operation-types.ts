/**
 * The types of the client's calls, derived from the generated operation table (the contract) and
 * the generated OpenAPI types: one options object per call holding the path ids (camelCase:
 * `agentId`), the body or query fields (as on the wire: `agent_config`, `limit`) and the request
 * options (`signal`, `endUser`, `retries`, `headers`, `idempotencyKey` where the call takes one).
 */
import type { IdempotentRequestOptions, RequestOptions, SourceFile } from './client-options.js';
import type { OPERATIONS } from './generated/operations.js';
import type { ChatStreamEvent, OperationId, Operations, QueryParameters, RequestBody, ResponseBody } from './types.js';
import type { UploadInput } from './uploads.js';

/** The contract's operations as the client calls them: `OperationTable['threads']['observe']`. */
export type OperationTable = typeof OPERATIONS;
export type OperationGroup = keyof OperationTable;

/** One row of the generated table. */
export type OperationEntry = {
  readonly operationId: OperationId;
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly input: 'none' | 'body' | 'query' | 'upload';
  readonly fields?: readonly string[];
  readonly response: 'json' | 'stream' | 'binary' | 'empty';
  readonly idempotent: boolean;
};

type PathParams<Path extends string> = Path extends `${string}{${infer Name}}${infer Rest}` ? Name | PathParams<Rest> : never;
/** `agent_id` -> `agentId`. */
export type CamelCase<Name extends string> = Name extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : Name;
/** The ids a path template needs, camelCased: `{ agentId: string; threadId: string }`. */
export type PathArguments<Path extends string> = { [Name in PathParams<Path> as CamelCase<Name>]: string };

type UploadForm<Id extends OperationId> = Operations[Id] extends { requestBody: { content: { 'multipart/form-data': infer Form } } } ? Form : never;
/** An upload call's fields: the file, its name and type, and the form's text fields (as on the wire). */
export type UploadArguments<Id extends OperationId> = {
  /** A `Blob`/`File`, bytes or a web `ReadableStream` (read into memory first, so a retry can send it again). */
  file: UploadInput;
  /** The file's name (a document's speaker and a format hint). Required unless `file` is a `File` (images default to `image`). */
  filename?: string;
  /** Media type of the upload part. @default the File's type, else application/octet-stream */
  mediaType?: string;
} & Partial<Omit<UploadForm<Id>, 'file'>>;

type Empty = Record<never, never>;

/** What a call takes besides its ids and request options: its JSON body, query or upload. */
export type OperationInput<E extends OperationEntry> = E['input'] extends 'body'
  ? RequestBody<E['operationId']>
  : E['input'] extends 'query'
    ? QueryParameters<E['operationId']>
    : E['input'] extends 'upload'
      ? UploadArguments<E['operationId']>
      : Empty;

/** The one options object of a call. */
export type OperationArguments<E extends OperationEntry> = PathArguments<E['path']> &
  OperationInput<E> &
  (E['idempotent'] extends true ? IdempotentRequestOptions : RequestOptions);

/** What a call answers: the success body; a stream's events; a stored file; nothing on 204. */
export type OperationResult<E extends OperationEntry> = E['response'] extends 'stream'
  ? AsyncGenerator<ChatStreamEvent, void, undefined>
  : Promise<E['response'] extends 'binary' ? SourceFile : E['response'] extends 'empty' ? void : ResponseBody<E['operationId']>>;

/** A call; its options object may be left out when nothing in it is required. */
export type OperationCall<E extends OperationEntry> = Empty extends OperationArguments<E>
  ? (options?: OperationArguments<E>) => OperationResult<E>
  : (options: OperationArguments<E>) => OperationResult<E>;

/** Every call of the contract, grouped as the contract groups them: `client.memories.search({ agentId, query })`. */
export type ClientOperations = {
  [Group in OperationGroup]: { [Name in keyof OperationTable[Group]]: OperationTable[Group][Name] extends infer E extends OperationEntry ? OperationCall<E> : never };
};

/** The keys the client takes out of the options object before the rest becomes the body or query. */
export const REQUEST_OPTION_KEYS = ['signal', 'endUser', 'retries', 'headers', 'idempotencyKey'] as const;

// A body, query or form field named like a request option or a path id would be taken for it: none is.
type Overlap<E extends OperationEntry> = keyof OperationInput<E> & ((typeof REQUEST_OPTION_KEYS)[number] | keyof PathArguments<E['path']>);
type Overlaps = {
  [Group in OperationGroup]: { [Name in keyof OperationTable[Group]]: OperationTable[Group][Name] extends infer E extends OperationEntry ? Overlap<E> : never }[keyof OperationTable[Group]];
}[OperationGroup];
type MustBeNever<T extends never> = T;
export type NoFieldShadowsAnOption = MustBeNever<Overlaps>;
