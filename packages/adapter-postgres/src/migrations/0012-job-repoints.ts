/**
 * An erasure's re-pointing of a merged memory (issue 33), recorded before the memory is deleted and
 * written anew so a resumed erasure finishes it: ids, dates and flags only, never text.
 */
export const storeMigration0012 = `
CREATE TABLE job_repoints (
  job_id text NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  memory_id text NOT NULL,
  organization_id text NOT NULL,
  agent_id text NOT NULL,
  created_at timestamptz NOT NULL,
  writer text NOT NULL,
  valid_to timestamptz,
  superseded_by text,
  suspicious boolean NOT NULL,
  remaining jsonb NOT NULL,
  PRIMARY KEY (job_id, memory_id)
);
`;
