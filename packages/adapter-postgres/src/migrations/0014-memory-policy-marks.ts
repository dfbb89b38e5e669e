/**
 * What the extraction policy said of a memory when it was learned (issue 44): its category and the
 * policy version that kept it, beside the memory's other marks (null for memories learned before);
 * and per job the memories it did not keep (receipts).
 */
export const storeMigration0014 = `
ALTER TABLE memory_marks ADD COLUMN category text, ADD COLUMN policy_version integer;
CREATE TABLE job_policy_drops (
  job_id text NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  turn_index integer NOT NULL,
  seq integer NOT NULL,
  category text,
  rule text NOT NULL,
  PRIMARY KEY (job_id, turn_index, seq)
);
`;
