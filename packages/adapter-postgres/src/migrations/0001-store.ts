/** Store tables: organizations, keys, agents, threads, messages, activity logs, leases. */
export const storeMigration0001 = `
CREATE TABLE organizations (
  id text PRIMARY KEY,
  name text NOT NULL,
  limits jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
  key_id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  secret_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX api_keys_organization ON api_keys (organization_id, created_at DESC);

CREATE TABLE agents (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  status text NOT NULL,
  config jsonb NOT NULL,
  visibility text NOT NULL,
  resumed_from_turn integer NOT NULL DEFAULT 0,
  restore_from text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX agents_organization ON agents (organization_id, created_at DESC, id DESC);
CREATE INDEX agents_status ON agents (status);

CREATE TABLE threads (
  id text PRIMARY KEY,
  agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  organization_id text NOT NULL,
  end_user_id text,
  status text NOT NULL,
  title text NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX threads_agent ON threads (agent_id, created_at DESC, id DESC);

CREATE TABLE messages (
  seq bigserial PRIMARY KEY,
  thread_id text NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
  agent_id text NOT NULL,
  speaker text NOT NULL,
  text text NOT NULL,
  sent_at text NOT NULL,
  source_ids jsonb NOT NULL DEFAULT '[]'::jsonb
);
CREATE INDEX messages_thread ON messages (thread_id, seq DESC);

CREATE TABLE activity_logs (
  log_id bigserial PRIMARY KEY,
  organization_id text NOT NULL,
  agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  thread_id text NOT NULL,
  user_id text NOT NULL,
  actor_email text NOT NULL,
  actor_display_name text NOT NULL,
  direction text NOT NULL,
  route text NOT NULL,
  request_id text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX activity_logs_agent ON activity_logs (agent_id, log_id DESC);

CREATE TABLE leases (
  name text PRIMARY KEY,
  holder text NOT NULL,
  expires_at bigint NOT NULL
);
`;
