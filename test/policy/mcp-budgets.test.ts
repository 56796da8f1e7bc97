import t from 'tap';
import { budgetApplies, budgetCounters, pastWarning, type McpBudget } from '../../src/policy/mcp-budgets.js';

const call = { server: 'fs', tool: 'write_file', memberId: 'mem_1' };
const b = (over: Partial<McpBudget>): McpBudget => ({ id: 'b', scope: 'server', period: 'hour', limit: 5, ...over });

t.test('which budgets count a call, by scope', async (t) => {
  t.ok(budgetApplies(b({ scope: 'server', server: 'fs' }), call));
  t.notOk(budgetApplies(b({ scope: 'server', server: 'github' }), call));
  t.ok(budgetApplies(b({ scope: 'tool', tool: 'write_file' }), call), 'a tool on any server');
  t.ok(budgetApplies(b({ scope: 'tool', tool: 'write_file', server: 'fs' }), call));
  t.notOk(budgetApplies(b({ scope: 'tool', tool: 'write_file', server: 'other' }), call), 'a tool of another server');
  t.ok(budgetApplies(b({ scope: 'member', memberId: 'mem_1' }), call));
  t.notOk(budgetApplies(b({ scope: 'member', memberId: 'mem_1' }), { ...call, memberId: null }), 'an unknown member is counted in no member budget');
  t.ok(budgetApplies(b({ scope: 'member_server', memberId: 'mem_1', server: 'fs' }), call));
  t.notOk(budgetApplies(b({ scope: 'member_server', memberId: 'mem_1', server: 'github' }), call));
});

t.test('counters: one per budget and period, ending when the hour or the UTC day ends', async (t) => {
  const now = Date.UTC(2026, 10, 23, 10, 30);
  const [hourly, daily] = budgetCounters([b({ id: 'h', server: 'fs' }), b({ id: 'd', server: 'fs', period: 'day' })], call, now);
  t.equal(hourly!.expiresAt, Date.UTC(2026, 10, 23, 11, 0));
  t.equal(daily!.expiresAt, Date.UTC(2026, 10, 24, 0, 0));
  t.not(hourly!.key, budgetCounters([b({ id: 'h', server: 'fs' })], call, now + 3_600_000)[0]!.key, 'the next hour has its own counter');
  t.equal(hourly!.key, budgetCounters([b({ id: 'h', server: 'fs' })], call, now + 60_000)[0]!.key, 'the same hour shares it');
  t.ok(pastWarning(8, 10, 80));
  t.notOk(pastWarning(7, 10, 80));
  t.notOk(pastWarning(10, 10, undefined), 'no warnAtPct, no warning');
});
