import { sha256 } from '../../policy/wasm/rule-files.js';
import { recordConfigChange } from '../audit.js';
import { isUniqueViolation, type Queryable } from '../db/database.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { newId } from '../ids.js';

interface WasmRuleRow {
  id: string;
  name: string;
  priority: number;
  sha256: string;
  size: number;
  wasm_base64: string;
  created_at: Date;
  updated_at: Date;
}

export interface WasmRuleContent {
  name: string;
  priority: number;
  bytes: Uint8Array;
}

const COLUMNS = 'id, name, priority, sha256, size, wasm_base64, created_at, updated_at';

/** A rule as the API shows it; the module itself only `withWasm`. */
export function wasmRuleView(row: WasmRuleRow, withWasm: boolean) {
  return {
    id: row.id,
    name: row.name,
    priority: row.priority,
    sha256: row.sha256,
    size: row.size,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    ...(withWasm ? { wasm: row.wasm_base64 } : {}),
  };
}

export type WasmRuleView = ReturnType<typeof wasmRuleView>;

/** The workspace's rules in the order gateways run them (priority, then name). */
export async function wasmRules(q: Queryable, workspaceId: string, withWasm: boolean): Promise<WasmRuleView[]> {
  const rows = await q.query<WasmRuleRow>(`SELECT ${COLUMNS} FROM wasm_rules WHERE workspace_id = $1 ORDER BY priority, name`, [workspaceId]);
  return rows.map((r) => wasmRuleView(r, withWasm));
}

export async function wasmRule(q: Queryable, workspaceId: string, ruleId: string, withWasm: boolean): Promise<WasmRuleView> {
  const [row] = await q.query<WasmRuleRow>(`SELECT ${COLUMNS} FROM wasm_rules WHERE workspace_id = $1 AND id = $2`, [workspaceId, ruleId]);
  if (row === undefined) throw new NotFoundError(`No WASM rule ${ruleId} in this workspace.`);
  return wasmRuleView(row, withWasm);
}

const nameTaken = (name: string) => new ConflictError('WASM_RULE_NAME_EXISTS', `A WASM rule named '${name}' already exists in this workspace.`);

async function refuseTakenName(tx: Queryable, workspaceId: string, name: string, selfId: string | null): Promise<void> {
  const [taken] = await tx.query<{ id: string }>('SELECT id FROM wasm_rules WHERE workspace_id = $1 AND name = $2', [workspaceId, name]);
  if (taken !== undefined && taken.id !== selfId) throw nameTaken(name);
}

type Actor = { workspaceId: string; memberId: string };

const brief = (r: WasmRuleView | null) => r && { name: r.name, priority: r.priority, sha256: r.sha256 };

/** Stores a new rule, or replaces rule `ruleId`'s name, priority and module. */
export async function writeWasmRule(tx: Queryable, actor: Actor, ruleId: string | null, content: WasmRuleContent): Promise<WasmRuleView> {
  const before = ruleId === null ? null : await wasmRule(tx, actor.workspaceId, ruleId, false);
  await refuseTakenName(tx, actor.workspaceId, content.name, ruleId);
  const values = [content.name, content.priority, sha256(content.bytes), content.bytes.length, Buffer.from(content.bytes).toString('base64')];
  const write =
    ruleId === null
      ? tx.query<WasmRuleRow>(
          `INSERT INTO wasm_rules (id, workspace_id, name, priority, sha256, size, wasm_base64) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
          [newId.wasmRule(), actor.workspaceId, ...values],
        )
      : tx.query<WasmRuleRow>(
          `UPDATE wasm_rules SET name = $3, priority = $4, sha256 = $5, size = $6, wasm_base64 = $7, updated_at = now()
           WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
          [actor.workspaceId, ruleId, ...values],
        );
  const [row] = await write.catch((err: unknown) => {
    if (isUniqueViolation(err)) throw nameTaken(content.name);
    throw err;
  });
  const after = wasmRuleView(row!, false);
  await recordConfigChange(tx, { ...actor, key: `wasmRules.${after.id}`, action: ruleId === null ? 'create' : 'update', before: brief(before), after: brief(after) });
  return after;
}

export async function deleteWasmRule(tx: Queryable, actor: Actor, ruleId: string): Promise<void> {
  const before = await wasmRule(tx, actor.workspaceId, ruleId, false);
  await tx.query('DELETE FROM wasm_rules WHERE workspace_id = $1 AND id = $2', [actor.workspaceId, ruleId]);
  await recordConfigChange(tx, { ...actor, key: `wasmRules.${ruleId}`, action: 'delete', before: brief(before), after: null });
}

/** The module of rule `ruleId` as stored. */
export async function wasmRuleBytes(q: Queryable, workspaceId: string, ruleId: string): Promise<Uint8Array> {
  const rule = await wasmRule(q, workspaceId, ruleId, true);
  return new Uint8Array(Buffer.from(rule.wasm!, 'base64'));
}
