/**
 * The review queue (issue 43): a memory held for review keeps its place in its mark (`review`, a
 * JSON document of ids, dates, decisions and a fingerprint hash, never the memory's text), with the
 * state, the proposal instant and the fingerprint as columns for the queue's order and the
 * "declined once, never proposed again" lookup.
 */
export const storeMigration0016 = `
ALTER TABLE memory_marks ADD COLUMN review jsonb, ADD COLUMN review_state text, ADD COLUMN review_at timestamptz, ADD COLUMN review_fingerprint text;
CREATE INDEX memory_marks_review ON memory_marks (agent_id, review_state, review_at, memory_id) WHERE review_state IS NOT NULL;
CREATE INDEX memory_marks_declined ON memory_marks (agent_id, review_fingerprint) WHERE review_state = 'declined';
`;
