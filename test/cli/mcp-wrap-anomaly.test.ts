import t from 'tap';
import { connectWrapped, EVERYTHING, mcpTraces, resultText, waitFor } from '../helpers/mcp.js';

// server-everything's get-sum answers arguments that are not numbers with the same error every time.
const stuck = { name: 'get-sum', arguments: { a: 'one', b: 'two' } };

t.test('mcpAnomalyMode enforce: a call repeated with the same failure is refused as ANOMALY; other calls still run', async (t) => {
  const w = await connectWrapped(t, { server: 'everything', command: [EVERYTHING], settings: { mcpAnomalyMode: 'enforce' } });
  const results = [];
  for (let i = 0; i < 4; i++) results.push(await w.client.callTool(stuck).catch((err: Error) => ({ isError: true, content: [{ type: 'text', text: err.message }] })));
  const refused = results.map((r) => /^\[Svc Governance\] BLOCKED: ANOMALY: /.test(resultText(r)));
  t.same(refused.slice(0, 2), [false, false], 'the first failures reach the server');
  t.ok(refused.slice(2).every(Boolean), 'then the repeat is refused');
  t.match(resultText(results.at(-1)), /consecutive_repeat|in a row/);
  t.equal(resultText(await w.client.callTool({ name: 'echo', arguments: { message: 'different' } })), 'Echo: different', 'a different call runs');
  const traces = await waitFor('the anomaly traces', () => {
    const all = mcpTraces(w.home);
    return all.filter((tr) => tr.mcp.code === 'ANOMALY').length >= 2 ? all : undefined;
  });
  t.match(traces.find((tr) => tr.mcp.code === 'ANOMALY'), { enforcement: 'KILL', mcp: { tool: 'get-sum', verdict: 'block', rule: 'anomaly.consecutive_repeat' } });
});

t.test('mcpAnomalyMode warn: every call runs; the finding is on the trace', async (t) => {
  const w = await connectWrapped(t, { server: 'everything', command: [EVERYTHING], settings: { mcpAnomalyMode: 'warn' } });
  for (let i = 0; i < 4; i++) {
    const r = await w.client.callTool(stuck).catch((err: Error) => ({ isError: true, content: [{ type: 'text', text: err.message }] }));
    t.notMatch(resultText(r), /Svc Governance/, `call ${i} reached the server`);
  }
  const traces = await waitFor('four traces', () => (mcpTraces(w.home).length >= 4 ? mcpTraces(w.home) : undefined));
  t.ok(traces.some((tr) => tr.warnings.some((x: string) => /^anomaly consecutive_repeat/.test(x))), 'the loop is noted');
});
