import t from 'tap';
import { allRoutes } from '../../src/controlplane/routes/index.js';
import { api, startTestControlPlane } from '../helpers/controlplane.js';

const cp = await startTestControlPlane(t);

t.test('the OpenAPI document lists every route with the schemas it validates with', async (t) => {
  const res = await api(cp, 'GET', '/openapi.json');
  t.equal(res.status, 200);
  const doc = res.body;
  t.equal(doc.openapi, '3.0.3');
  t.same(doc.servers, [{ url: '/api/v1' }]);
  for (const r of allRoutes) {
    const op = doc.paths[r.path.replace(/:(\w+)/g, '{$1}')]?.[r.method.toLowerCase()];
    t.ok(op, `${r.method} ${r.path} is documented`);
    t.equal(op?.summary, r.summary);
  }
  const settings = doc.paths['/workspace/settings'].put.requestBody.content['application/json'].schema;
  t.equal(settings.additionalProperties, false, 'unknown settings keys are refused');
  t.match(settings.properties.allowedModels, { type: 'array', maxItems: 512, items: { minLength: 1, maxLength: 256 } });
  t.match(settings.properties.reviewHoldBypassTtlMinutes, { minimum: 1, maximum: 60 });
  t.ok(settings.properties.ssoKeyMaxIdleDays.nullable, 'ssoKeyMaxIdleDays accepts null');
  const signup = doc.paths['/auth/signup'].post;
  t.match(signup.requestBody.content['application/json'].schema.properties.password, { minLength: 8, maxLength: 128 });
  t.same(signup.security, [], 'signup is public');
  const limit = doc.paths['/traces'].get.parameters.find((p: { name: string }) => p.name === 'limit');
  t.match(limit, { in: 'query', required: false, schema: { minimum: 1, maximum: 100, default: 20 } });
  const period = doc.paths['/usage/summary'].get.parameters.find((p: { name: string }) => p.name === 'period');
  t.match(period, { required: true, schema: { enum: ['daily', 'weekly', 'monthly'] } });
  t.match(doc.paths['/gateways/{id}/config'].get.parameters, [{ name: 'id', in: 'path', required: true }]);
  t.match(doc.paths['/members/invite'].post.description, /OWNER or ADMIN/);
  const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).filter((s) => s !== 'default');
  t.same(statuses('/auth/verify-email', 'post'), ['200', '400', '410', '429'], 'seed 000: TOKEN_INVALID, TOKEN_EXPIRED');
  t.same(statuses('/auth/resend-verification', 'post'), ['200', '400', '404', '409', '429'], 'seed 000: USER_NOT_FOUND, ALREADY_VERIFIED, RATE_LIMITED');
  t.same(statuses('/auth/signup', 'post'), ['201', '409', '422', '429', '503']);
  t.ok(doc.paths['/auth/login'].post.responses['429'].headers['retry-after'], 'a 429 documents retry-after');
  t.same(statuses('/gateways/{id}/config', 'get'), ['200', '304', '400', '401', '403', '404']);
  t.same(statuses('/members', 'get'), ['200', '401']);
  t.same(statuses('/policies/{policyId}/disable', 'post'), ['200', '400', '401', '403', '404']);
});

t.test('holds, the hook gate, incidents, notifications and SIEM are documented with their statuses', async (t) => {
  const doc = (await api(cp, 'GET', '/openapi.json')).body;
  const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).filter((s) => s !== 'default');
  t.same(statuses('/decisions', 'post'), ['200', '201', '400', '401', '403']);
  t.same(statuses('/decisions/{entryId}/review', 'post'), ['200', '400', '401', '403', '404', '409']);
  t.match(doc.paths['/decisions/{entryId}/review'].post.description, /OWNER, ADMIN or EM/);
  t.same(statuses('/hook-gate', 'post'), ['200', '400', '401', '503']);
  t.match(doc.paths['/decisions/approved-bypasses'].get.parameters.find((p: { name: string }) => p.name === 'argumentsSha256'), { in: 'query', schema: { pattern: '^[0-9a-f]{64}$' } });
  t.equal(doc.paths['/incidents/{id}/resolve'].post.requestBody.required, false, 'a resolution note is optional');
  t.equal(doc.paths['/decisions'].post.requestBody.required, true);
  t.match(doc.paths['/siem/destinations'].post.description, /OWNER or ADMIN/);
  t.ok(doc.paths['/notifications/log'].get);
});
