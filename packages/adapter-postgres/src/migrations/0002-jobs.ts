/** Observation jobs, their turns, and the per-thread record of turns not learned. */
export const storeMigration0002 = `
CREATE TABLE jobs (
  id text PRIMARY KEY,
  seq bigserial UNIQUE,
  organization_id text NOT NULL,
  agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  thread_id text NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
  end_user_id text,
  request_id text NOT NULL,
  kind text NOT NULL,
  status text NOT NULL,
  turns_total integer NOT NULL,
  turns_processed integer NOT NULL DEFAULT 0,
  error text,
  queued boolean NOT NULL DEFAULT false,
  resumed_at timestamptz,
  learning jsonb,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX jobs_agent_unfinished ON jobs (agent_id, seq) WHERE status NOT IN ('committed', 'failed', 'cancelled');
CREATE INDEX jobs_thread ON jobs (thread_id, seq);

CREATE TABLE job_turns (
  job_id text NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  turn_index integer NOT NULL,
  speaker text NOT NULL,
  text text NOT NULL,
  sent_at text NOT NULL,
  tags jsonb NOT NULL DEFAULT '[]'::jsonb,
  state text NOT NULL,
  failure_reason text,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  PRIMARY KEY (job_id, turn_index)
);

CREATE TABLE learning_records (
  id bigserial PRIMARY KEY,
  organization_id text NOT NULL,
  agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  thread_id text NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
  job_id text NOT NULL,
  request_id text NOT NULL,
  ranges jsonb NOT NULL,
  reason text NOT NULL,
  message text NOT NULL,
  refunded_credits numeric,
  reported boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL
);
CREATE INDEX learning_records_thread ON learning_records (thread_id, id DESC);
`;
