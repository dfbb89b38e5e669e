/**
 * Text recognition on one image (a rendered page or a figure crop).
 *
 * Contract:
 * - `recognize` MUST NOT reach the network.
 * - It MUST reject (never resolve with garbage) when the engine fails; the service maps the
 *   rejection to `ocr_failed`.
 * - `confidence` is 0..100, the engine's mean word confidence.
 */
export type Ocr = {
  readonly specificationVersion: 'v1';
  readonly id: string;
  recognize(request: OcrRequest): Promise<OcrResult>;
  /** Releases workers; idempotent. */
  close?(): Promise<void>;
};

export type OcrRequest = {
  /** PNG or JPEG bytes. */
  image: Uint8Array;
  signal?: AbortSignal;
};

export type OcrResult = {
  text: string;
  confidence: number;
};
