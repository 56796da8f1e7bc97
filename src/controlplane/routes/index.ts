import { route, type Route } from '../router.js';
import { authRoutes } from './auth.js';
import { budgetRoutes } from './budget.js';
import { credentialRoutes } from './credentials.js';
import { decisionRoutes } from './decisions.js';
import { gatewayRoutes } from './gateways.js';
import { hookGateRoutes } from './hook-gate.js';
import { incidentRoutes } from './incidents.js';
import { inventoryRoutes } from './inventory.js';
import { keyRoutes } from './keys.js';
import { mcpDaemonRoutes } from './mcp-daemon.js';
import { mcpServerRoutes } from './mcp-servers.js';
import { memberRoutes } from './members.js';
import { notificationRoutes } from './notifications.js';
import { openApiDocument } from './openapi.js';
import { orgRoutes } from './orgs.js';
import { policyRoutes } from './policies.js';
import { settingsRoutes } from './settings.js';
import { siemRoutes } from './siem.js';
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
  ...orgRoutes,
  ...traceRoutes,
  ...usageRoutes,
  ...policyRoutes,
  ...wasmRuleRoutes,
  ...decisionRoutes,
  ...hookGateRoutes,
  ...mcpServerRoutes,
  ...mcpDaemonRoutes,
  ...inventoryRoutes,
  ...incidentRoutes,
  ...notificationRoutes,
  ...siemRoutes,
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
