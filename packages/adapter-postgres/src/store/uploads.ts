import type { UploadRecord, UploadStore } from '@memory-agents/core/adapter';
import type { SqlClient } from '../sql-client.js';
import { patchRow, type PatchColumn } from '../patch-row.js';
import { iso, type Row } from './rows.js';

function toIngest(row: Row): UploadRecord {
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
    chunking: row.chunking as UploadRecord['chunking'],
    turnsTotal: Number(row.turns_total),
    figures: Number(row.figures),
    figuresDropped: Number(row.figures_dropped),
    wordsTotal: Number(row.words_total),
    deferred: row.deferred as boolean,
    resumes: (row.resumes as string | null) ?? null,
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

/** Ingests of uploaded files (sources). */
export function postgresUploads(db: SqlClient): UploadStore {
  return {
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
  };
}
