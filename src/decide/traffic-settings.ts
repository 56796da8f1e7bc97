import { z } from 'zod';

/** `decision_traffic` in the proxy config: both relax the 3.0 refusals during a migration. */
export const decisionTrafficSchema = z.strictObject({
  /** shadow: unpinned models and DLP block patterns are reported, not refused. */
  mode: z.enum(['enforce', 'shadow']).default('enforce'),
  allow_unpinned: z.boolean().default(false),
});
export type DecisionTrafficSettings = z.infer<typeof decisionTrafficSchema>;
