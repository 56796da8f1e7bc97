import { z } from 'zod';
import { dailyCapUsd } from '../../state/budget.js';
import type { Queryable } from '../db/database.js';
import { utcPeriodStart } from '../periods.js';
import { route, type Route } from '../router.js';

const cap = z.number().min(0).max(1e9).nullable();
const budgetBody = z
  .strictObject({ dailyUsd: cap.optional(), monthlyUsd: cap.optional() })
  .refine((b) => b.dailyUsd !== undefined || b.monthlyUsd !== undefined, { message: 'send dailyUsd, monthlyUsd or both (null removes a cap)' });

/** Thresholds, in percent of a cap, at which an alert is raised. */
const ALERT_THRESHOLDS = [50, 80, 100] as const;

async function budgetStatus(q: Queryable, workspaceId: string) {
  const dayStart = utcPeriodStart('daily');
  const monthStart = utcPeriodStart('monthly');
  const [row] = await q.query<{ budget_daily_usd: number | null; budget_monthly_usd: number | null; day: number; month: number }>(
    `SELECT w.budget_daily_usd, w.budget_monthly_usd,
       (SELECT coalesce(sum(cost_usd), 0)::float8 FROM traces WHERE workspace_id = w.id AND time >= $2) AS day,
       (SELECT coalesce(sum(cost_usd), 0)::float8 FROM traces WHERE workspace_id = w.id AND time >= $3) AS month
     FROM workspaces w WHERE w.id = $1`,
    [workspaceId, dayStart, monthStart],
  );
  return {
    dailyUsd: dailyCapUsd(row!.budget_daily_usd),
    dailyIsDefault: row!.budget_daily_usd === null,
    monthlyUsd: row!.budget_monthly_usd,
    spentTodayUsd: row!.day,
    spentThisMonthUsd: row!.month,
    dayStart: dayStart.toISOString(),
    monthStart: monthStart.toISOString(),
  };
}

export const budgetRoutes: Route[] = [
  route.authed('A', {
    method: 'GET',
    path: '/budget',
    summary: 'Spend caps ($100 a day when no daily cap is saved) and spend so far today and this month',
    handler: async ({ services, principal }) => ({ body: await budgetStatus(services.db, principal.workspaceId) }),
  }),
  route.authed<z.infer<typeof budgetBody>>('A', {
    method: 'PUT',
    path: '/budget',
    summary: 'Set the daily and/or monthly spend cap in USD; null removes a cap',
    body: budgetBody,
    handler: async ({ services, principal, body }) => {
      const { result } = await services.changeConfig(principal.workspaceId, async (tx) => {
        await tx.query(
          `UPDATE workspaces SET budget_daily_usd = CASE WHEN $2 THEN $3::float8 ELSE budget_daily_usd END,
             budget_monthly_usd = CASE WHEN $4 THEN $5::float8 ELSE budget_monthly_usd END WHERE id = $1`,
          [principal.workspaceId, body.dailyUsd !== undefined, body.dailyUsd ?? null, body.monthlyUsd !== undefined, body.monthlyUsd ?? null],
        );
        return budgetStatus(tx, principal.workspaceId);
      });
      return { body: result };
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/budget/alerts',
    summary: 'Thresholds (50, 80, 100 % of a cap) the current day or month has reached',
    handler: async ({ services, principal }) => {
      const s = await budgetStatus(services.db, principal.workspaceId);
      const periods = [
        { period: 'daily', capUsd: s.dailyUsd as number | null, spentUsd: s.spentTodayUsd, periodStart: s.dayStart },
        { period: 'monthly', capUsd: s.monthlyUsd, spentUsd: s.spentThisMonthUsd, periodStart: s.monthStart },
      ];
      const alerts = periods.flatMap((p) =>
        p.capUsd === null
          ? []
          : ALERT_THRESHOLDS.filter((pct) => p.spentUsd >= (p.capUsd! * pct) / 100).map((pct) => ({
              id: `${p.period}-${pct}-${p.periodStart.slice(0, p.period === 'daily' ? 10 : 7)}`,
              ...p,
              thresholdPct: pct,
            })),
      );
      return { body: { alerts } };
    },
  }),
];
