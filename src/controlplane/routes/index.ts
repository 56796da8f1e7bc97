import { route, type Route } from '../router.js';
import { authRoutes } from './auth.js';
import { budgetRoutes } from './budget.js';
import { credentialRoutes } from './credentials.js';
import { gatewayRoutes } from './gateways.js';
import { keyRoutes } from './keys.js';
import { memberRoutes } from './members.js';
import { openApiDocument } from './openapi.js';
import { policyRoutes } from './policies.js';
import { settingsRoutes } from './settings.js';
import { traceRoutes } from './traces.js';
import { usageRoutes } from './usage.js';
import { wasmRuleRoutes } from './wasm-rules.js';

const apiRoutes: Route[] = [
  ...authRoutes,
  ...keyRoutes,
  ...memberRoutes,
  ...settingsRoutes,
  ...credentialRoutes,
  ...budgetRoutes,
  ...gatewayRoutes,
  ...traceRoutes,
  ...usageRoutes,
  ...policyRoutes,
  ...wasmRuleRoutes,
];

let document: object | undefined;

export const allRoutes: Route[] = [
  ...apiRoutes,
  route.public({
    method: 'GET',
    path: '/openapi.json',
    summary: 'This OpenAPI document',
    handler: async () => ({ body: (document ??= openApiDocument(allRoutes)) }),
  }),
];
