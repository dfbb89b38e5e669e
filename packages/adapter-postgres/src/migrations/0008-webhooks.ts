/**
 * Webhooks (issue 34): an organization's endpoints and the deliveries of its events. A delivery
 * is claimed with `FOR UPDATE SKIP LOCKED` (several processes deliver from one database); the
 * partial indexes find the due ones, the head of each endpoint's ordering key, and the finished
 * ones past their retention.
 */
export const storeMigration0008 = `
CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  url text NOT NULL,
  description text,
  events text[] NOT NULL,
  secret text NOT NULL,
  previous_secret text,
  previous_secret_expires_at bigint,
  enabled boolean NOT NULL,
  disabled_reason text,
  consecutive_failures integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_organization ON webhook_endpoints (organization_id, created_at, id);

CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id text NOT NULL,
  event_type text NOT NULL,
  ordering_key text NOT NULL,
  body text NOT NULL,
  status text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  last_status_code integer,
  last_error text,
  last_attempt_at timestamptz,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  created_at timestamptz NOT NULL,
  claimed_by text,
  claim_expires_at bigint NOT NULL DEFAULT 0
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, seq) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_key ON webhook_deliveries (endpoint_id, ordering_key, seq) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, seq);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (created_at) WHERE status <> 'pending';
`;
