import { z } from 'zod';
import { VERSION } from '../../lib/version.js';
import type { Route } from '../router.js';

const SECURITY_NOTE: Record<Route['access'], string> = {
  P: 'public',
  A: 'any member (access token or vk_ key)',
  OA: 'OWNER or ADMIN',
  OAE: 'OWNER, ADMIN or EM',
  OAED: 'OWNER, ADMIN, EM or DEVELOPER (not a VIEWER)',
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

const STATUS_DESCRIPTIONS: Record<number, string> = {
  200: 'Success',
  201: 'Created',
  304: 'Not modified (If-None-Match matched the ETag)',
  400: 'Invalid body, query or path (code validation, or as named)',
  401: 'No or invalid credentials',
  403: 'Role too low, or as the route says',
  404: 'Not found',
  409: 'Conflict (code as named)',
  410: 'Gone (code as named)',
  422: 'Invalid body (code validation)',
  429: 'Too many attempts (code RATE_LIMITED, retry-after)',
  501: 'Not implemented',
  503: 'Unavailable (code as named)',
};

/** The statuses a route answers: its own list, or what its shape implies. */
export function routeStatuses(r: Route): number[] {
  if (r.statuses !== undefined) return [...r.statuses];
  const out = [200];
  if (r.body !== undefined || r.query !== undefined || r.path.includes(':')) out.push(r.invalidBodyStatus ?? 400);
  if (r.access !== 'P') out.push(401);
  if (r.access === 'OA' || r.access === 'OAE' || r.access === 'OAED') out.push(403);
  if (r.path.includes(':')) out.push(404);
  return [...new Set(out)].sort((a, b) => a - b);
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
      ...(body === undefined ? {} : { requestBody: { required: !body.safeParse(undefined).success, content: { 'application/json': { schema: toJson(body) } } } }),
      responses: {
        ...Object.fromEntries(
          routeStatuses(r).map((status) => [
            String(status),
            status < 300 || status === 304
              ? { description: STATUS_DESCRIPTIONS[status] ?? 'Success' }
              : {
                  description: STATUS_DESCRIPTIONS[status] ?? 'An error',
                  ...(status === 429 ? { headers: { 'retry-after': { description: 'Seconds until the limit resets', schema: { type: 'integer' } } } } : {}),
                  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
                },
          ]),
        ),
        default: { description: 'An unexpected error (500)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
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
