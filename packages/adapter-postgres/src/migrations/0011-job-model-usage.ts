/**
 * Model tokens of a job's learning batches, read by its receipt (issue 33): one row per batch and
 * model. `turn_indexes` are the batch's turns; a re-run batch deletes the rows whose turns overlap it.
 */
export const storeMigration0011 = `
CREATE TABLE job_model_usage (
  job_id text NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  first_turn integer NOT NULL,
  turn_indexes integer[] NOT NULL,
  position integer NOT NULL,
  model text NOT NULL,
  input_tokens bigint NOT NULL,
  output_tokens bigint NOT NULL,
  PRIMARY KEY (job_id, first_turn, position)
);
`;
