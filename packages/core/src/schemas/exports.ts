import { z } from 'zod';
import { agentId, dateTime } from './common.js';

/** `POST /v1/agents/{agent_id}/exports` body (optional): `vectors: false` leaves the memories' vectors out. */
export const createExportBody = z.object({ vectors: z.boolean().optional() }).strict().meta({ id: 'CreateExportInput' });

/** An export job of an agent (an extension: issue 34; the file format is docs/export-format.md). */
export const exportJob = z
  .object({
    export_id: z.string().regex(/^exp_[0-9A-HJKMNP-TV-Z]{26}$/),
    agent_id: agentId,
    status: z.enum(['running', 'ready', 'failed']),
    vectors: z.boolean(),
    created_at: dateTime,
    finished_at: dateTime.nullable(),
    bytes: z.number().int().nullable(),
    lines: z.number().int().nullable(),
    error: z.string().nullable(),
  })
  .strict()
  .meta({ id: 'ExportJob' });

/** The export file, JSON lines (`application/x-ndjson`). */
export const exportFile = z.string().meta({ format: 'binary', id: 'ExportFile' });
