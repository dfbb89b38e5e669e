/** Memories a job's learning superseded, read by its receipt (issue 33). */
export const storeMigration0009 = `
CREATE TABLE job_supersessions (
  job_id text NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  memory_id text NOT NULL,
  turn_index integer,
  seq bigserial NOT NULL,
  PRIMARY KEY (job_id, memory_id)
);
`;
