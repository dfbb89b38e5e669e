/** Document ingests (sources), Idempotency-Key records and uploaded images. */
export const storeMigration0004 = `
CREATE TABLE document_ingests (
  job_id text PRIMARY KEY,
  organization_id text NOT NULL,
  agent_id text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  thread_id text NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
  source_id text NOT NULL,
  stored boolean NOT NULL,
  filename text NOT NULL,
  doc_format text NOT NULL,
  media_type text NOT NULL,
  bytes bigint NOT NULL,
  chunking jsonb NOT NULL,
  turns_total integer NOT NULL,
  figures integer NOT NULL,
  figures_dropped integer NOT NULL,
  words_total bigint NOT NULL,
  deferred boolean NOT NULL,
  resumes text,
  created_at timestamptz NOT NULL
);
CREATE INDEX document_ingests_source ON document_ingests (agent_id, source_id, created_at);
CREATE INDEX document_ingests_thread ON document_ingests (agent_id, thread_id, created_at);
CREATE INDEX document_ingests_org_source ON document_ingests (organization_id, source_id) WHERE stored;

CREATE TABLE idempotency_keys (
  organization_id text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  state text NOT NULL,
  status integer,
  response text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, key)
);

CREATE TABLE images (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  media_type text NOT NULL,
  bytes bigint NOT NULL,
  width integer NOT NULL,
  height integer NOT NULL,
  created_at timestamptz NOT NULL
);
`;
