import type { Queryable } from '../db/database.js';
import { newId } from '../ids.js';

/**
 * Events a person or a security team hears about, each with the SIEM stream it travels on (seed
 * 000: `governance_alerts`, `device_disconnects`; `decision.pending` is named there).
 */
export const EVENT_STREAMS = {
  'decision.pending': 'governance_alerts',
  'incident.opened': 'governance_alerts',
  'budget.hard_cap_reached': 'governance_alerts',
  'gateway.stopped_reporting': 'device_disconnects',
  'mcp.server.pending': 'governance_alerts',
  'mcp.tool_change.high_risk': 'governance_alerts',
  'inventory.ungoverned.detected': 'governance_alerts',
} as const;

export type EventKind = keyof typeof EVENT_STREAMS;
export const EVENT_KINDS = Object.keys(EVENT_STREAMS) as EventKind[];
export type EventStream = (typeof EVENT_STREAMS)[EventKind];
export const SIEM_STREAMS = ['governance_alerts', 'device_disconnects'] as const;

export type Severity = 'CRITICAL' | 'HIGH' | 'MEDIUM' | 'LOW' | 'INFO';

/** What a webhook receives as its body and a SIEM destination as one event. */
export interface EventEnvelope {
  readonly id: string;
  readonly kind: string;
  readonly stream: string;
  readonly severity: Severity;
  readonly workspaceId: string;
  readonly at: string;
  readonly data: Record<string, unknown>;
}

export interface EmittedEvent {
  readonly workspaceId: string;
  readonly kind: EventKind;
  readonly severity: Severity;
  /** One event per key and workspace: emitting the same key again does nothing (replays, repeats). */
  readonly dedupeKey: string;
  readonly data: Record<string, unknown>;
}

/**
 * Records an event and, in the same transaction, queues it for every enabled notification rule
 * that names its kind and every active SIEM destination that takes its stream. Answers the event
 * id, or null when an event with the same key was already recorded. The dispatcher delivers.
 */
export async function emitEvent(tx: Queryable, now: Date, event: EmittedEvent): Promise<string | null> {
  const id = newId.event();
  const stream = EVENT_STREAMS[event.kind];
  const envelope: EventEnvelope = { id, kind: event.kind, stream, severity: event.severity, workspaceId: event.workspaceId, at: now.toISOString(), data: event.data };
  const inserted = await tx.query(
    `INSERT INTO events (id, workspace_id, kind, stream, severity, dedupe_key, payload, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (workspace_id, dedupe_key) DO NOTHING RETURNING id`,
    [id, event.workspaceId, event.kind, stream, event.severity, event.dedupeKey, JSON.stringify(envelope), now.toISOString()],
  );
  if (inserted.length === 0) return null;
  const rules = await tx.query<{ id: string }>(
    `SELECT id FROM notification_rules WHERE workspace_id = $1 AND enabled AND deleted_at IS NULL AND events @> $2::jsonb`,
    [event.workspaceId, JSON.stringify([event.kind])],
  );
  for (const rule of rules) {
    await tx.query(
      `INSERT INTO notification_deliveries (id, workspace_id, rule_id, event_id, kind, state, attempts, next_attempt_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $6, $6) ON CONFLICT (rule_id, event_id) DO NOTHING`,
      [newId.delivery(), event.workspaceId, rule.id, id, event.kind, now.toISOString()],
    );
  }
  const destinations = await tx.query<{ id: string }>(`SELECT id FROM siem_destinations WHERE workspace_id = $1 AND active AND streams @> $2::jsonb`, [
    event.workspaceId,
    JSON.stringify([stream]),
  ]);
  for (const destination of destinations) {
    await tx.query(
      `INSERT INTO siem_queue (id, workspace_id, destination_id, event_id, attempts, next_attempt_at, created_at) VALUES ($1, $2, $3, $4, 0, $5, $5)
       ON CONFLICT (destination_id, event_id) DO NOTHING`,
      [newId.siemEntry(), event.workspaceId, destination.id, id, now.toISOString()],
    );
  }
  return id;
}
