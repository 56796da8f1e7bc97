/** The current UTC day or month, as budgets and usage count them. */
export function utcPeriodStart(period: 'daily' | 'monthly', now = new Date()): Date {
  return period === 'daily'
    ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()))
    : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}
