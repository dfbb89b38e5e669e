import type { ImageRecord, ImageStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { iso, type Row } from './rows.js';

function toImage(row: Row): ImageRecord {
  return {
    id: row.id as string,
    organizationId: row.organization_id as string,
    mediaType: row.media_type as string,
    bytes: Number(row.bytes),
    width: Number(row.width),
    height: Number(row.height),
    createdAt: iso(row.created_at),
  };
}

/** Uploaded images. */
export function postgresImages(db: SqlClient): ImageStore {
  return {
    async insert({ image }) {
      await db.query(
        `INSERT INTO images (id, organization_id, media_type, bytes, width, height, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (id) DO NOTHING`,
        [image.id, image.organizationId, image.mediaType, image.bytes, image.width, image.height, image.createdAt],
      );
    },
    async get({ organizationId, imageId }) {
      const { rows } = await db.query('SELECT * FROM images WHERE id = $1 AND organization_id = $2', [imageId, organizationId]);
      return rows[0] ? toImage(rows[0]) : null;
    },
    async list({ organizationId, afterId, limit }) {
      const { rows } = await db.query('SELECT * FROM images WHERE organization_id = $1 AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3', [organizationId, afterId ?? null, limit]);
      return rows.map(toImage);
    },
  };
}
