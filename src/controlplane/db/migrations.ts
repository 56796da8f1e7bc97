import type { Database } from './database.js';

/**
 * The schema, one migration per entry, applied in order and recorded in schema_migrations.
 * Append new entries; never edit an applied one.
 */
export const MIGRATIONS: readonly string[] = [
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
  // Email verification. An address is only claimed for good once verified: until then several
  // users may hold it (an invite does not attach to someone else's unverified sign-up), and the
  // one that verifies supersedes the others.
  `
  ALTER TABLE users ADD COLUMN email_verified_at timestamptz;
  ALTER TABLE users ADD COLUMN superseded_at timestamptz;
  ALTER TABLE users DROP CONSTRAINT users_email_key;
  CREATE UNIQUE INDEX users_verified_email ON users (email) WHERE email_verified_at IS NOT NULL AND superseded_at IS NULL;
  CREATE INDEX users_email ON users (email);
  CREATE TABLE email_tokens (
    token_hash text PRIMARY KEY,
    email text NOT NULL,
    user_id text REFERENCES users(id),
    signup jsonb,
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX email_tokens_user ON email_tokens (user_id);
  `,
  // Holds a person reviews, the tool calls gateways rewrote, incidents, gate events, and what goes
  // out: events fanned out to notification webhooks and SIEM destinations, with their delivery
  // state. Times are written by the control plane's clock, not the database's.
  `
  CREATE TABLE holds (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    state text NOT NULL,
    tool text NOT NULL,
    rule text NOT NULL,
    source text,
    reason text,
    arguments_sha256 text NOT NULL,
    arguments jsonb NOT NULL,
    requester_member_id text NOT NULL,
    reporter_member_id text NOT NULL,
    origin text NOT NULL,
    session_id text,
    harness text,
    trace_id text,
    gateway_id text,
    model text,
    incident_id text,
    occurrences integer NOT NULL DEFAULT 1,
    reviewer_member_id text,
    review_reason text,
    reviewed_at timestamptz,
    bypass_granted boolean NOT NULL DEFAULT false,
    expires_at timestamptz,
    created_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
  );
  CREATE INDEX holds_workspace_created ON holds (workspace_id, created_at DESC);
  CREATE UNIQUE INDEX holds_pending_call ON holds (workspace_id, rule, tool, arguments_sha256, requester_member_id) WHERE state = 'held';
  CREATE INDEX holds_approved_call ON holds (workspace_id, arguments_sha256, tool, rule) WHERE state = 'approved';
  CREATE TABLE hold_substitutions (
    workspace_id text NOT NULL REFERENCES workspaces(id),
    trace_id text NOT NULL,
    call_id text NOT NULL,
    tool text NOT NULL,
    action text NOT NULL,
    rule text NOT NULL,
    source text,
    code text,
    reason text,
    hold_id text,
    incident_id text,
    session_id text,
    harness text,
    gateway_id text,
    model text,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, trace_id, call_id)
  );
  CREATE TABLE incidents (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    state text NOT NULL,
    group_session text NOT NULL,
    rule text NOT NULL,
    kind text NOT NULL,
    severity text NOT NULL,
    title text NOT NULL,
    tool text,
    harness text,
    code text,
    occurrences integer NOT NULL DEFAULT 1,
    counts jsonb NOT NULL,
    refs jsonb NOT NULL,
    first_seen_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    resolved_at timestamptz,
    resolved_by text,
    resolution text
  );
  CREATE UNIQUE INDEX incidents_open_group ON incidents (workspace_id, group_session, rule) WHERE state = 'open';
  CREATE INDEX incidents_workspace_seen ON incidents (workspace_id, last_seen_at DESC);
  CREATE TABLE hook_events (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    event_id text NOT NULL,
    type text NOT NULL,
    at timestamptz NOT NULL,
    member_id text NOT NULL,
    gate_source text,
    harness text,
    session_id text,
    tool text,
    code text,
    rule text,
    hold_id text,
    incident_id text,
    trace_id text,
    detail jsonb NOT NULL,
    received_at timestamptz NOT NULL,
    UNIQUE (workspace_id, event_id)
  );
  CREATE TABLE events (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    kind text NOT NULL,
    stream text NOT NULL,
    severity text NOT NULL,
    dedupe_key text NOT NULL,
    payload jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    UNIQUE (workspace_id, dedupe_key)
  );
  CREATE TABLE notification_rules (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    name text NOT NULL,
    events jsonb NOT NULL,
    channel text NOT NULL,
    url text NOT NULL,
    secret_sealed text NOT NULL,
    enabled boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    deleted_at timestamptz
  );
  CREATE TABLE notification_deliveries (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    rule_id text NOT NULL REFERENCES notification_rules(id),
    event_id text NOT NULL REFERENCES events(id),
    kind text NOT NULL,
    state text NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    last_status integer,
    last_error text,
    next_attempt_at timestamptz NOT NULL,
    delivered_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (rule_id, event_id)
  );
  CREATE INDEX notification_deliveries_due ON notification_deliveries (next_attempt_at) WHERE state = 'pending';
  CREATE INDEX notification_deliveries_workspace ON notification_deliveries (workspace_id, created_at DESC);
  CREATE TABLE siem_destinations (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    name text NOT NULL,
    type text NOT NULL,
    streams jsonb NOT NULL,
    config jsonb NOT NULL,
    credentials_sealed text,
    credentials_hint jsonb NOT NULL,
    active boolean NOT NULL DEFAULT true,
    last_delivery jsonb,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE TABLE siem_queue (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    destination_id text NOT NULL REFERENCES siem_destinations(id),
    event_id text NOT NULL REFERENCES events(id),
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    next_attempt_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    UNIQUE (destination_id, event_id)
  );
  CREATE INDEX siem_queue_due ON siem_queue (destination_id, next_attempt_at);
  CREATE TABLE siem_dlq (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    destination_id text NOT NULL REFERENCES siem_destinations(id),
    event_id text NOT NULL REFERENCES events(id),
    attempts integer NOT NULL,
    last_error text,
    failed_at timestamptz NOT NULL,
    UNIQUE (destination_id, event_id)
  );
  CREATE INDEX siem_dlq_workspace ON siem_dlq (workspace_id, failed_at DESC);
  ALTER TABLE gateways ADD COLUMN stopped_alerted_at timestamptz;
  `,
  `
  CREATE TABLE mcp_servers (
    workspace_id text NOT NULL REFERENCES workspaces(id),
    name text NOT NULL,
    status text NOT NULL,
    disabled_tools jsonb NOT NULL DEFAULT '[]',
    pin jsonb,
    pin_digest text,
    candidate jsonb,
    candidate_digest text,
    last_change jsonb,
    first_seen_at timestamptz,
    last_seen_at timestamptz,
    decided_by text,
    decided_at timestamptz,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, name)
  );
  CREATE INDEX mcp_servers_queue ON mcp_servers (workspace_id, status);
  CREATE TABLE mcp_daemon_reports (
    workspace_id text NOT NULL REFERENCES workspaces(id),
    daemon_id text NOT NULL,
    report jsonb NOT NULL,
    received_at timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, daemon_id)
  );
  `,
  `
  ALTER TABLE policies ADD COLUMN sop_rules jsonb NOT NULL DEFAULT '[]';
  ALTER TABLE policy_versions ADD COLUMN sop_rules jsonb NOT NULL DEFAULT '[]';
  `,
  `
  CREATE TABLE devices (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    fingerprint text NOT NULL,
    member_id text,
    report jsonb NOT NULL,
    first_seen_at timestamptz NOT NULL,
    last_report_at timestamptz NOT NULL,
    disconnected_at timestamptz,
    retired_at timestamptz,
    UNIQUE (workspace_id, fingerprint)
  );
  CREATE TABLE device_disconnects (
    id bigserial PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    device_id text NOT NULL REFERENCES devices(id),
    harness text,
    reason text,
    member_id text,
    at timestamptz NOT NULL
  );
  CREATE INDEX device_disconnects_workspace ON device_disconnects (workspace_id, at DESC);
  `,
  `
  ALTER TABLE members ADD COLUMN deactivated_at timestamptz;
  `,
  `
  ALTER TABLE gateways ADD COLUMN token_hash text UNIQUE;
  ALTER TABLE gateways ADD COLUMN previous_token_hash text UNIQUE;
  ALTER TABLE gateways ADD COLUMN previous_token_valid_until timestamptz;
  ALTER TABLE gateways ADD COLUMN token_last_four text;
  ALTER TABLE gateways ADD COLUMN token_rotated_at timestamptz;
  ALTER TABLE gateways ADD COLUMN deployment_target text NOT NULL DEFAULT 'self-hosted';
  ALTER TABLE gateways ADD COLUMN url text;
  ALTER TABLE gateways ADD COLUMN registered_by text;
  ALTER TABLE gateways ADD COLUMN revoked_at timestamptz;
  CREATE TABLE orgs (
    id text PRIMARY KEY,
    name text NOT NULL,
    owner_user_id text NOT NULL REFERENCES users(id),
    gateway_id text REFERENCES gateways(id),
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE teams (
    id text PRIMARY KEY,
    org_id text NOT NULL REFERENCES orgs(id),
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, name)
  );
  ALTER TABLE workspaces ADD COLUMN org_id text REFERENCES orgs(id);
  ALTER TABLE workspaces ADD COLUMN team_id text REFERENCES teams(id);
  ALTER TABLE workspaces ADD COLUMN gateway_id text REFERENCES gateways(id);
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
