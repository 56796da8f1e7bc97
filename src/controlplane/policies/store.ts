import { recordConfigChange } from '../audit.js';
import { isUniqueViolation, type Queryable } from '../db/database.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { newId } from '../ids.js';
import type { PolicyContent } from './content.js';

interface PolicyRow {
  id: string;
  name: string;
  description: string | null;
  decide_rules: PolicyContent['decide_rules'];
  sop_rules: PolicyContent['sop_rules'];
  enabled: boolean;
  version: number;
  created_at: Date;
  updated_at: Date;
}

interface VersionRow {
  version: number;
  name: string;
  description: string | null;
  decide_rules: PolicyContent['decide_rules'];
  sop_rules: PolicyContent['sop_rules'];
  change: string;
  member_id: string | null;
  created_at: Date;
}

/** What changed a policy's content: each one records a new version. */
type ContentChange = 'create' | 'update' | 'rollback';

const COLUMNS = 'id, name, description, decide_rules, sop_rules, enabled, version, created_at, updated_at';

export function policyView(row: PolicyRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    decide_rules: row.decide_rules,
    sop_rules: row.sop_rules,
    enabled: row.enabled,
    version: row.version,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function versionView(row: VersionRow) {
  return {
    version: row.version,
    name: row.name,
    description: row.description,
    decide_rules: row.decide_rules,
    sop_rules: row.sop_rules,
    change: row.change,
    memberId: row.member_id,
    createdAt: row.created_at.toISOString(),
  };
}

export type PolicyView = ReturnType<typeof policyView>;

/** The live (not deleted) policies of a workspace, oldest first; `enabledOnly` for what gateways enforce. */
export async function livePolicies(q: Queryable, workspaceId: string, enabledOnly = false): Promise<PolicyView[]> {
  const rows = await q.query<PolicyRow>(
    `SELECT ${COLUMNS} FROM policies WHERE workspace_id = $1 AND deleted_at IS NULL ${enabledOnly ? 'AND enabled' : ''} ORDER BY created_at, id`,
    [workspaceId],
  );
  return rows.map(policyView);
}

export async function livePolicy(q: Queryable, workspaceId: string, policyId: string): Promise<PolicyView> {
  const [row] = await q.query<PolicyRow>(`SELECT ${COLUMNS} FROM policies WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL`, [workspaceId, policyId]);
  if (row === undefined) throw new NotFoundError(`No policy ${policyId} in this workspace.`);
  return policyView(row);
}

/** Every version of a policy, newest first; a deleted policy's history stays readable for audit. */
export async function policyVersions(q: Queryable, workspaceId: string, policyId: string) {
  const [known] = await q.query('SELECT 1 FROM policies WHERE workspace_id = $1 AND id = $2', [workspaceId, policyId]);
  if (known === undefined) throw new NotFoundError(`No policy ${policyId} in this workspace.`);
  const rows = await q.query<VersionRow>(
    'SELECT version, name, description, decide_rules, sop_rules, change, member_id, created_at FROM policy_versions WHERE policy_id = $1 ORDER BY version DESC',
    [policyId],
  );
  return rows.map(versionView);
}

export async function policyVersion(q: Queryable, policyId: string, version: number): Promise<PolicyContent> {
  const [row] = await q.query<VersionRow>('SELECT name, description, decide_rules, sop_rules FROM policy_versions WHERE policy_id = $1 AND version = $2', [policyId, version]);
  if (row === undefined) throw new NotFoundError(`Policy ${policyId} has no version ${version}.`);
  return { name: row.name, description: row.description, decide_rules: row.decide_rules, sop_rules: row.sop_rules };
}

const nameTaken = (name: string) => new ConflictError('POLICY_NAME_EXISTS', `A policy named '${name}' already exists in this workspace.`);

/**
 * Refuses content another live policy would clash with: the same name, or a decide rule id it
 * already uses (a gateway loads all of them together, and a rule id names one rule there).
 */
async function checkClashes(tx: Queryable, workspaceId: string, content: PolicyContent, selfId: string | null): Promise<void> {
  const others = (await livePolicies(tx, workspaceId)).filter((p) => p.id !== selfId);
  if (others.some((p) => p.name === content.name)) throw nameTaken(content.name);
  const owners = new Map(others.flatMap((p) => p.decide_rules.map((r) => [r.id, p.name] as const)));
  const issues = content.decide_rules.flatMap((r, i) =>
    owners.has(r.id) ? [{ path: `decide_rules.${i}.id`, message: `'${r.id}' is already used by policy '${owners.get(r.id)}'` }] : [],
  );
  if (issues.length > 0) throw new ValidationError(issues.map((i) => `${i.path}: ${i.message}`).join('; '), issues);
}

/** Writes `content` as the policy's next version (version 1 when `policyId` is null: a new policy). */
export async function writePolicyContent(
  tx: Queryable,
  actor: { workspaceId: string; memberId: string },
  policyId: string | null,
  content: PolicyContent,
  change: ContentChange,
): Promise<PolicyView> {
  const before = policyId === null ? null : await livePolicy(tx, actor.workspaceId, policyId);
  await checkClashes(tx, actor.workspaceId, content, policyId);
  const rules = JSON.stringify(content.decide_rules);
  const sopRules = JSON.stringify(content.sop_rules);
  const write =
    policyId === null
      ? tx.query<PolicyRow>(
          `INSERT INTO policies (id, workspace_id, name, description, decide_rules, sop_rules, version) VALUES ($1, $2, $3, $4, $5, $6, 1) RETURNING ${COLUMNS}`,
          [newId.policy(), actor.workspaceId, content.name, content.description, rules, sopRules],
        )
      : tx.query<PolicyRow>(
          `UPDATE policies SET name = $3, description = $4, decide_rules = $5, sop_rules = $6, version = version + 1, updated_at = now()
           WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING ${COLUMNS}`,
          [actor.workspaceId, policyId, content.name, content.description, rules, sopRules],
        );
  const [row] = await write.catch((err: unknown) => {
    if (isUniqueViolation(err)) throw nameTaken(content.name);
    throw err;
  });
  await tx.query('INSERT INTO policy_versions (policy_id, version, name, description, decide_rules, sop_rules, change, member_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
    row!.id,
    row!.version,
    content.name,
    content.description,
    rules,
    sopRules,
    change,
    actor.memberId,
  ]);
  const after = policyView(row!);
  await audit(tx, actor, after.id, change, before, after);
  return after;
}

/** Enables or disables a live policy; its content and version stay as they are. */
export async function setPolicyEnabled(tx: Queryable, actor: { workspaceId: string; memberId: string }, policyId: string, enabled: boolean): Promise<PolicyView> {
  const before = await livePolicy(tx, actor.workspaceId, policyId);
  const [row] = await tx.query<PolicyRow>(`UPDATE policies SET enabled = $3, updated_at = now() WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [
    actor.workspaceId,
    policyId,
    enabled,
  ]);
  const after = policyView(row!);
  await audit(tx, actor, policyId, enabled ? 'enable' : 'disable', before, after);
  return after;
}

/** Soft delete: the policy leaves every list and every gateway; its versions stay for audit. */
export async function deletePolicy(tx: Queryable, actor: { workspaceId: string; memberId: string }, policyId: string): Promise<void> {
  const before = await livePolicy(tx, actor.workspaceId, policyId);
  await tx.query('UPDATE policies SET deleted_at = now(), updated_at = now() WHERE workspace_id = $1 AND id = $2', [actor.workspaceId, policyId]);
  await audit(tx, actor, policyId, 'delete', before, null);
}

function audit(tx: Queryable, actor: { workspaceId: string; memberId: string }, policyId: string, action: string, before: PolicyView | null, after: PolicyView | null) {
  const brief = (p: PolicyView | null) => p && { name: p.name, version: p.version, enabled: p.enabled, rules: p.decide_rules.map((r) => r.id), sopRules: p.sop_rules.map((r) => r.id) };
  return recordConfigChange(tx, { ...actor, key: `policies.${policyId}`, action, before: brief(before), after: brief(after) });
}
