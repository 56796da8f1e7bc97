import { z } from 'zod';
import { matchesWhere, parseWhere, WhereSyntaxError, type WhereNode } from './where.js';

/**
 * A rule of the SOP register (seed 002 tier 4): a block, or a hold (REQUIRE_APPROVAL), on the calls
 * of some tools whose arguments meet a WHERE clause.
 */
export const sopRuleSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'an id is 1–128 letters, digits, dot, dash, colon or underscore'),
  action: z.enum(['block', 'require_approval']),
  /** Tool names; `*` is any tool. */
  tools: z.array(z.string().min(1).max(256)).min(1).max(100).default(['*']),
  where: z
    .string()
    .min(1)
    .max(2000)
    .superRefine((clause, ctx) => {
      try {
        parseWhere(clause);
      } catch (err) {
        if (err instanceof WhereSyntaxError) ctx.addIssue({ code: 'custom', message: `the WHERE clause does not read: ${err.message}` });
        else throw err;
      }
    })
    .optional(),
  reason: z.string().min(1).max(2000),
});
export type SopRule = z.infer<typeof sopRuleSchema>;

export const sopRulesSchema = z
  .array(sopRuleSchema)
  .max(500)
  .superRefine((rules, ctx) => {
    const seen = new Set<string>();
    rules.forEach((r, i) => {
      if (seen.has(r.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `'${r.id}' is used by an earlier rule` });
      seen.add(r.id);
    });
  });

export interface CompiledSopRule extends SopRule {
  readonly condition: WhereNode | null;
}

/** The rules with their clauses parsed; a rule whose clause does not read is left out (the control plane refuses those on write). */
export function compileSopRules(rules: readonly SopRule[]): CompiledSopRule[] {
  const out: CompiledSopRule[] = [];
  for (const rule of rules) {
    try {
      out.push({ ...rule, condition: rule.where === undefined ? null : parseWhere(rule.where) });
    } catch {
      // Unreadable: skipped.
    }
  }
  return out;
}

/** The first rule that applies to the call. */
export function firstSopMatch(rules: readonly CompiledSopRule[], tool: string, input: unknown): CompiledSopRule | undefined {
  return rules.find((r) => (r.tools.includes('*') || r.tools.includes(tool)) && (r.condition === null || matchesWhere(r.condition, { tool, input })));
}
