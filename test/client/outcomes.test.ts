import t from 'tap';
import { errorFromResponse, errorFromStreamEvent, governanceNotices, hijackOf, withheldNotice } from '../../src/client/outcomes.js';
import { InvalidResponseError, RequestRejectedError, UpstreamFailureError, VerdictError } from '../../src/client/index.js';

// How the proxy's signals read, for the shapes the end-to-end tests do not reach.

t.test('notices: several in one text, glued to the model’s own text or a paragraph apart', async (t) => {
  const a = '[Svc Governance] BLOCKED: the bash tool call was blocked by rule r1: no. It was not run.';
  const b = '[Svc Governance] HELD: the deploy tool call awaits a person’s approval. It was not run; do not retry it.';
  t.same(governanceNotices(`Sure, running it.${a}${b}`), [a, b]);
  t.same(governanceNotices(`${a}\n\nThe model goes on.`), [a]);
  t.same(governanceNotices('nothing here'), []);
  t.equal(withheldNotice('[Svc Governance] BLOCKED: rule guard withheld this response: secrets'), '[Svc Governance] BLOCKED: rule guard withheld this response: secrets');
  t.equal(withheldNotice(a), null, 'a refused tool call is a steer, not a withheld answer');
});

t.test('a steer without a notice in the answer (a corrective card) still has a reason', async (t) => {
  t.same(hijackOf('tr_1', []), { traceId: 'tr_1', reason: 'the gateway steered this request (enforcement HIJACK, trace tr_1)', notices: [] });
});

t.test('error bodies: OpenAI and Anthropic shapes, a KILL header, and bodies that do not read', async (t) => {
  const kill = errorFromResponse(
    429,
    { 'x-svc-enforcement': 'KILL', 'x-svc-trace-id': 'tr_2', 'x-svc-incident-id': 'inc_1' },
    JSON.stringify({ error: { message: 'Hard cap reached', type: 'rate_limit_error', code: 'OVERAGE_HARD_CAP_EXCEEDED', param: null, trace_id: 'tr_2' } }),
  );
  t.type(kill, VerdictError);
  t.same((kill as VerdictError).verdict, { enforcement: 'KILL', traceId: 'tr_2', code: 'OVERAGE_HARD_CAP_EXCEEDED', reason: 'Hard cap reached', status: 429, incidentId: 'inc_1' });
  const anthropic = errorFromResponse(403, { 'x-svc-enforcement': 'KILL' }, JSON.stringify({ type: 'error', error: { type: 'permission_error', message: 'Blocked', code: 'policy_denied', trace_id: 'tr_3' } }));
  t.match(anthropic, { verdict: { code: 'policy_denied', traceId: 'tr_3' } }, 'the trace id from the body when the header is missing');
  t.type(errorFromResponse(429, {}, JSON.stringify({ error: { message: 'slow down', code: 'rate_limited' } })), UpstreamFailureError, 'a 429 without KILL is the provider');
  t.match(errorFromResponse(502, {}, '<html>bad gateway</html>'), { constructor: UpstreamFailureError, message: /502: <html>/ });
  t.type(errorFromResponse(404, {}, ''), RequestRejectedError);
  t.type(new InvalidResponseError('x'), Error);
});

t.test('a stream’s error event: a policy code is a verdict, anything else a failure', async (t) => {
  const v = errorFromStreamEvent({ error: { message: 'Refused by the anomaly detectors', code: 'anomaly_killed', trace_id: 'tr_4' } }, null);
  t.match(v, { constructor: VerdictError, verdict: { code: 'anomaly_killed', traceId: 'tr_4', status: 200 } });
  const f = errorFromStreamEvent({ type: 'error', error: { type: 'overloaded_error', message: 'overloaded' } }, 'tr_5');
  t.match(f, { constructor: UpstreamFailureError, traceId: 'tr_5', gatewayCode: 'overloaded_error' });
});
