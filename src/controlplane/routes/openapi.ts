import { z } from 'zod';
import { VERSION } from '../../lib/version.js';
import type { Route } from '../router.js';

const SECURITY_NOTE: Record<Route['access'], string> = {
  P: 'public',
  A: 'any member (access token or vk_ key)',
  OA: 'OWNER or ADMIN',
  OAE: 'OWNER, ADMIN or EM',
  SESSION: 'a login session (access token)',
};

const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object' } },
    },
  },
};

const toJson = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'openapi-3.0' });

function queryParameters(schema: z.ZodType | undefined) {
  if (schema === undefined) return [];
  const json = toJson(schema) as { properties?: Record<string, object>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({ name, in: 'query', required: json.required?.includes(name) ?? false, schema: s }));
}

/** The OpenAPI 3 document of the routes, generated from the zod schemas they validate with. */
export function openApiDocument(routes: readonly Route[]): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:(\w+)/g, '{$1}');
    const pathParams = [...r.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const body = r.documentedBody ?? r.body;
    (paths[path] ??= {})[r.method.toLowerCase()] = {
      summary: r.summary,
      description: `Who may call: ${SECURITY_NOTE[r.access]}.`,
      ...(r.access === 'P' ? { security: [] } : {}),
      parameters: [...pathParams, ...queryParameters(r.query)],
      ...(body === undefined ? {} : { requestBody: { required: true, content: { 'application/json': { schema: toJson(body) } } } }),
      responses: {
        '200': { description: 'Success' },
        default: { description: 'An error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: 'svc control plane', version: VERSION },
    servers: [{ url: '/api/v1' }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A login access token or a vk_ virtual key' } },
      schemas: { Error: errorSchema },
    },
    security: [{ bearer: [] }],
    paths,
  };
}
