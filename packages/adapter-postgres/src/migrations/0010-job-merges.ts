/** Turns of a job merged into an existing memory as near-duplicates, read by receipts and erasure (issue 33). */
export const storeMigration0010 = `
CREATE TABLE job_merges (
  job_id text NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  turn_index integer NOT NULL,
  memory_id text NOT NULL,
  PRIMARY KEY (job_id, turn_index)
);
`;
