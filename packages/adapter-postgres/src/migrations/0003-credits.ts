/**
 * Credits and limits: billing accounts (settings and the derived balance, one row per
 * organization), the ledger, and the shared rate windows and concurrency places that make limits
 * hold across processes.
 */
export const storeMigration0003 = `
CREATE TABLE billing_accounts (
  organization_id text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  enabled boolean NOT NULL DEFAULT false,
  low_credit_threshold numeric NOT NULL DEFAULT 0,
  prices jsonb NOT NULL DEFAULT '{}'::jsonb,
  balance numeric NOT NULL DEFAULT 0
);

CREATE TABLE ledger_entries (
  entry_id bigserial PRIMARY KEY,
  organization_id text NOT NULL REFERENCES billing_accounts(organization_id) ON DELETE CASCADE,
  kind text NOT NULL,
  route text NOT NULL,
  in_words integer NOT NULL DEFAULT 0,
  out_words integer NOT NULL DEFAULT 0,
  cost numeric NOT NULL,
  reference text,
  job_id text,
  turn_costs jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX ledger_entries_reference ON ledger_entries (organization_id, reference) WHERE reference IS NOT NULL;
CREATE INDEX ledger_entries_organization ON ledger_entries (organization_id, entry_id DESC);
CREATE INDEX ledger_entries_job ON ledger_entries (job_id) WHERE job_id IS NOT NULL;

CREATE TABLE rate_limit_hits (
  key text NOT NULL,
  at_ms bigint NOT NULL
);
CREATE INDEX rate_limit_hits_key ON rate_limit_hits (key, at_ms);

CREATE TABLE concurrency_places (
  key text NOT NULL,
  holder text NOT NULL,
  expires_at bigint NOT NULL,
  PRIMARY KEY (key, holder)
);
`;
