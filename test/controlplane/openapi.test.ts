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
});
