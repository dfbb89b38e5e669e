/** Erasure jobs (`POST .../memories/erase`, issue 30). */
export const storeMigration0007 = `
CREATE TABLE erasures (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  end_user_id text,
  target_kind text NOT NULL,
  target_id text NOT NULL,
  status text NOT NULL,
  counts jsonb NOT NULL,
  error text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  started_at timestamptz,
  completed_at timestamptz
);
CREATE INDEX erasures_unfinished ON erasures (created_at, id) WHERE status IN ('queued', 'running');
`;
