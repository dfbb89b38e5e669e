/**
 * Maintenance runs (issue 43): an agent's dry runs, applications and undos of merge duplicates,
 * supersede history and sweep expired. The diff holds memory ids, validity and hashes only, never
 * a memory's text; the rows go with their agent.
 */
export const storeMigration0015 = `
CREATE TABLE maintenance_runs (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  kind text NOT NULL,
  status text NOT NULL,
  max_share double precision NOT NULL,
  current_memories integer NOT NULL,
  changes jsonb NOT NULL,
  done integer NOT NULL DEFAULT 0,
  created_by text NOT NULL,
  error text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  applied_at timestamptz,
  undo_until timestamptz,
  undone_at timestamptz
);
CREATE INDEX maintenance_runs_agent ON maintenance_runs (agent_id, created_at DESC, id DESC);
CREATE INDEX maintenance_runs_unfinished ON maintenance_runs (status) WHERE status IN ('applying', 'undoing');
`;
