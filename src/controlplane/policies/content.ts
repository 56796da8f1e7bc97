import { z } from 'zod';
import { int32 } from '../../lib/storable.js';
import { policyDecideRulesSchema } from '../../config/sync-document.js';
import { sopRulesSchema, type SopRule } from '../../policy/sop-rules.js';

const name = z.string().trim().min(1).max(128);
const description = z.string().max(2000).nullable();

/** POST /policies */
export const policyCreateBody = z.strictObject({ name, description: description.optional(), decide_rules: policyDecideRulesSchema.default([]), sop_rules: sopRulesSchema.default([]) });

/** PUT /policies/:policyId: a partial update, at least one field. */
export const policyUpdateBody = z
  .strictObject({ name: name.optional(), description: description.optional(), decide_rules: policyDecideRulesSchema.optional(), sop_rules: sopRulesSchema.optional() })
  .refine((b) => b.name !== undefined || b.description !== undefined || b.decide_rules !== undefined || b.sop_rules !== undefined, {
    message: 'send name, description, decide_rules, sop_rules or several',
  });

/** POST /policies/:policyId/rollback */
export const policyRollbackBody = z.strictObject({ version: int32().min(1) });

export type PolicyCreate = z.infer<typeof policyCreateBody>;
export type PolicyUpdate = z.infer<typeof policyUpdateBody>;

/** What a version of a policy holds. */
export interface PolicyContent {
  name: string;
  description: string | null;
  decide_rules: z.infer<typeof policyDecideRulesSchema>;
  /** The policy's SOP rules (blocks and holds with WHERE clauses) the gates apply. */
  sop_rules: SopRule[];
}
