import type { DocumentIngestRecord, DocumentStore, IdempotencyRecord, IdempotencyStore, ImageRecord, ImageStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { patchRow, type PatchColumn } from '../patch-row.js';
import { iso, type Row } from './rows.js';

function toIngest(row: Row): DocumentIngestRecord {
  return {
    jobId: row.job_id as string,
    organizationId: row.organization_id as string,
    agentId: row.agent_id as string,
    threadId: row.thread_id as string,
    sourceId: row.source_id as string,
    stored: row.stored as boolean,
    filename: row.filename as string,
    docFormat: row.doc_format as string,
    mediaType: row.media_type as string,
    bytes: Number(row.bytes),
    chunking: row.chunking as DocumentIngestRecord['chunking'],
    turnsTotal: Number(row.turns_total),
    figures: Number(row.figures),
    figuresDropped: Number(row.figures_dropped),
    wordsTotal: Number(row.words_total),
    deferred: row.deferred as boolean,
    resumes: (row.resumes as string | null) ?? null,
    createdAt: iso(row.created_at),
  };
}

function toIdempotency(row: Row): IdempotencyRecord {
  return {
    organizationId: row.organization_id as string,
    key: row.key as string,
    fingerprint: row.fingerprint as string,
    state: row.state as IdempotencyRecord['state'],
    status: row.status === null || row.status === undefined ? null : Number(row.status),
    response: (row.response as string | null) ?? null,
    createdAt: iso(row.created_at),
  };
}

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

const INGEST_PATCH_COLUMNS: Record<string, PatchColumn> = {
  turnsTotal: { column: 'turns_total' },
  figures: { column: 'figures' },
  figuresDropped: { column: 'figures_dropped' },
  wordsTotal: { column: 'words_total' },
  deferred: { column: 'deferred' },
  docFormat: { column: 'doc_format' },
  mediaType: { column: 'media_type' },
};

/** The document areas of the PostgreSQL store over one client (pool or transaction). */
export function postgresDocumentAreas(db: SqlClient): { documents: DocumentStore; idempotency: IdempotencyStore; images: ImageStore } {
  return {
    documents: {
      async insert({ record }) {
        await db.query(
          `INSERT INTO document_ingests (job_id, organization_id, agent_id, thread_id, source_id, stored, filename, doc_format, media_type, bytes,
                                         chunking, turns_total, figures, figures_dropped, words_total, deferred, resumes, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, $14, $15, $16, $17, $18)`,
          [
            record.jobId, record.organizationId, record.agentId, record.threadId, record.sourceId, record.stored, record.filename,
            record.docFormat, record.mediaType, record.bytes, JSON.stringify(record.chunking), record.turnsTotal, record.figures,
            record.figuresDropped, record.wordsTotal, record.deferred, record.resumes, record.createdAt,
          ],
        );
      },
      async get({ agentId, jobId }) {
        const { rows } = await db.query('SELECT * FROM document_ingests WHERE job_id = $1 AND agent_id = $2', [jobId, agentId]);
        return rows[0] ? toIngest(rows[0]) : null;
      },
      async update({ jobId, patch }) {
        const row = await patchRow(db, 'document_ingests', 'job_id', jobId, patch, INGEST_PATCH_COLUMNS);
        return row ? toIngest(row) : null;
      },
      async listBySource({ agentId, sourceId }) {
        const { rows } = await db.query('SELECT * FROM document_ingests WHERE agent_id = $1 AND source_id = $2 ORDER BY created_at, job_id', [agentId, sourceId]);
        return rows.map(toIngest);
      },
      async listByThread({ agentId, threadId }) {
        const { rows } = await db.query('SELECT * FROM document_ingests WHERE agent_id = $1 AND thread_id = $2 ORDER BY created_at DESC, job_id DESC', [
          agentId,
          threadId,
        ]);
        return rows.map(toIngest);
      },
      async findStored({ organizationId, sourceId }) {
        const { rows } = await db.query(
          'SELECT * FROM document_ingests WHERE organization_id = $1 AND source_id = $2 AND stored ORDER BY created_at, job_id LIMIT 1',
          [organizationId, sourceId],
        );
        return rows[0] ? toIngest(rows[0]) : null;
      },
    },
    idempotency: {
      async claim({ record, notBefore, inFlightNotBefore }) {
        // One statement: the insert wins, or an expired or abandoned row is replaced, or the live row is returned.
        const { rows } = await db.query(
          `INSERT INTO idempotency_keys (organization_id, key, fingerprint, state, status, response, created_at)
           VALUES ($1, $2, $3, 'in_flight', NULL, NULL, $4)
           ON CONFLICT (organization_id, key) DO UPDATE
             SET fingerprint = EXCLUDED.fingerprint, state = 'in_flight', status = NULL, response = NULL, created_at = EXCLUDED.created_at
             WHERE idempotency_keys.created_at < $5
                OR (idempotency_keys.state = 'in_flight' AND idempotency_keys.created_at < $6::timestamptz)
           RETURNING organization_id`,
          [record.organizationId, record.key, record.fingerprint, record.createdAt, notBefore, inFlightNotBefore ?? null],
        );
        if (rows.length > 0) return null;
        const { rows: existing } = await db.query('SELECT * FROM idempotency_keys WHERE organization_id = $1 AND key = $2', [record.organizationId, record.key]);
        return existing[0] ? toIdempotency(existing[0]) : null;
      },
      async complete({ organizationId, key, status, response }) {
        await db.query("UPDATE idempotency_keys SET state = 'completed', status = $3, response = $4 WHERE organization_id = $1 AND key = $2", [
          organizationId,
          key,
          status,
          response,
        ]);
      },
      async release({ organizationId, key }) {
        await db.query('DELETE FROM idempotency_keys WHERE organization_id = $1 AND key = $2', [organizationId, key]);
      },
    },
    images: {
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
    },
  };
}
