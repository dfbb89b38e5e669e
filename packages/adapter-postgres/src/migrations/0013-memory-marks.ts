/**
 * Memory marks (issue 42): pinned, forgotten with a reason (restorable until `forgotten_due`),
 * edited, cited. Ids, dates, flags and the caller's reason only, never a memory's text; the rows go
 * with their agent.
 */
export const storeMigration0013 = `
CREATE TABLE memory_marks (
  agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  memory_id text NOT NULL,
  organization_id text NOT NULL,
  thread_id text NOT NULL,
  observation_id text NOT NULL,
  source_id text,
  pinned boolean NOT NULL DEFAULT false,
  forgotten jsonb,
  forgotten_due timestamptz,
  edited jsonb,
  cited_at timestamptz,
  cited_count integer NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (agent_id, memory_id)
);
CREATE INDEX memory_marks_thread ON memory_marks (agent_id, thread_id);
CREATE INDEX memory_marks_forgotten_due ON memory_marks (forgotten_due) WHERE forgotten_due IS NOT NULL;
`;
