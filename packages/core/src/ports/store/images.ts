/**
 * Store area `images`: uploaded images.
 * Part of the {@link Store} port (see `index.ts` for the general contract: absent is `null`,
 * records are copies, backend failures reject).
 */

/** An uploaded image (`img_` id = content hash scoped to the organization). */
export type ImageRecord = {
  id: string;
  organizationId: string;
  mediaType: string;
  bytes: number;
  width: number;
  height: number;
  createdAt: string;
};

export type ImageStore = {
  /** Inserts the image; an existing id of the organization is kept as it is (same bytes). */
  insert(request: { image: ImageRecord }): Promise<void>;
  /** Null when absent or owned by another organization. */
  get(request: { organizationId: string; imageId: string }): Promise<ImageRecord | null>;
  /**
   * The organization's images in id order, after `afterId` (exclusive) when given, at most `limit`
   * (moving a data dir to another store pages through them).
   */
  list(request: { organizationId: string; afterId?: string; limit: number }): Promise<ImageRecord[]>;
};
