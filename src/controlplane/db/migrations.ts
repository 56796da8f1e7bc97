import type { Database } from './database.js';

/**
 * The schema, one migration per entry, applied in order and recorded in schema_migrations.
 * Append new entries; never edit an applied one.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE workspaces (
    id text PRIMARY KEY,
    name text NOT NULL,
    plan text NOT NULL,
    settings jsonb NOT NULL DEFAULT '{}',
    byoc_secrets text,
    budget_daily_usd double precision,
    budget_monthly_usd double precision,
    config_version integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE users (
    id text PRIMARY KEY,
    email text NOT NULL UNIQUE,
    name text NOT NULL,
    password_hash text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE members (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    user_id text NOT NULL REFERENCES users(id),
    role text NOT NULL,
    display_name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, user_id)
  );
  CREATE TABLE sessions (
    id text PRIMARY KEY,
    member_id text NOT NULL REFERENCES members(id),
    refresh_hash text NOT NULL UNIQUE,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE api_keys (
    id text PRIMARY KEY,
    member_id text NOT NULL REFERENCES members(id),
    workspace_id text NOT NULL REFERENCES workspaces(id),
    name text NOT NULL,
    key_hash text NOT NULL UNIQUE,
    last_four text NOT NULL,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE provider_credentials (
    workspace_id text NOT NULL REFERENCES workspaces(id),
    provider text NOT NULL,
    fields_encrypted text NOT NULL,
    last_four text,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, provider)
  );
  CREATE TABLE audit_events (
    id bigserial PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    member_id text,
    kind text NOT NULL,
    detail jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX audit_events_workspace ON audit_events (workspace_id, created_at);
  CREATE TABLE gateways (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    name text NOT NULL,
    byok_required boolean NOT NULL DEFAULT false,
    applied_version integer,
    last_ack jsonb,
    last_heartbeat_at timestamptz,
    last_heartbeat jsonb,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE traces (
    id text NOT NULL,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    gateway_id text,
    time timestamptz NOT NULL,
    session_id text,
    model text,
    enforcement text NOT NULL,
    input_tokens integer,
    output_tokens integer,
    cost_usd double precision,
    token_utility text NOT NULL DEFAULT 'USEFUL',
    utility_reason text,
    record jsonb NOT NULL,
    PRIMARY KEY (workspace_id, id)
  );
  CREATE INDEX traces_workspace_time ON traces (workspace_id, time DESC);
  `,
  `
  CREATE TABLE policies (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    name text NOT NULL,
    description text,
    decide_rules jsonb NOT NULL,
    enabled boolean NOT NULL DEFAULT true,
    version integer NOT NULL,
    deleted_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE UNIQUE INDEX policies_live_name ON policies (workspace_id, name) WHERE deleted_at IS NULL;
  CREATE TABLE policy_versions (
    policy_id text NOT NULL REFERENCES policies(id),
    version integer NOT NULL,
    name text NOT NULL,
    description text,
    decide_rules jsonb NOT NULL,
    change text NOT NULL,
    member_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (policy_id, version)
  );
  CREATE TABLE wasm_rules (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    name text NOT NULL,
    priority integer NOT NULL,
    sha256 text NOT NULL,
    size integer NOT NULL,
    wasm_base64 text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, name)
  );
  `,
];

export async function migrate(db: Database): Promise<void> {
  await db.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
  const applied = new Set((await db.query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version));
  for (const [index, sql] of MIGRATIONS.entries()) {
    const version = index + 1;
    if (applied.has(version)) continue;
    await db.transaction(async (tx) => {
      for (const statement of sql.split(';').map((s) => s.trim()).filter(Boolean)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [version]);
    });
  }
}
