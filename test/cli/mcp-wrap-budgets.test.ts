import t from 'tap';
import { connectWrapped, EVERYTHING, mcpTraces, resultText, waitFor } from '../helpers/mcp.js';
import { startRedis } from '../helpers/redis.js';

t.test('mcpBudgets: one budget shared by two wrappers through Redis; calls past it are refused with MCP_BUDGET_EXCEEDED', async (t) => {
  const redis = await startRedis(t);
  const settings = {
    mcpBudgets: { warnAtPct: 75, budgets: [{ id: `echo-${process.pid}-${Date.now()}`, scope: 'tool', tool: 'echo', period: 'hour', limit: 4 }] },
  };
  const wrappers = await Promise.all([0, 1].map(() => connectWrapped(t, { server: 'everything', command: [EVERYTHING], settings, wrapArgs: ['--valkey-url', redis.url] })));
  const outcomes: string[] = [];
  for (let i = 0; i < 6; i++) {
    const result = await wrappers[i % 2]!.client.callTool({ name: 'echo', arguments: { message: `call ${i}` } });
    outcomes.push(result.isError ? resultText(result).replace(/^\[Svc Governance\] BLOCKED: (\w+):.*$/s, '$1') : 'ran');
  }
  t.same(outcomes, ['ran', 'ran', 'ran', 'ran', 'MCP_BUDGET_EXCEEDED', 'MCP_BUDGET_EXCEEDED'], 'four calls in all, across both wrappers');
  t.equal(resultText(await wrappers[0]!.client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } })), 'The sum of 1 and 2 is 3.', 'another tool is not counted');
  const traces = await waitFor('the refusal traces', () => {
    const all = wrappers.flatMap((w) => mcpTraces(w.home));
    return all.filter((tr) => tr.mcp.code === 'MCP_BUDGET_EXCEEDED').length === 2 ? all : undefined;
  });
  t.ok(traces.some((tr) => tr.warnings.some((w: string) => /mcp_budget_warning: budget 'echo-.*' at 3 of 4/.test(w))), 'the approach to the limit is noted at 75%');
});
