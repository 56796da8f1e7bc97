import type { McpServerView } from './mcp-registry.js';

/**
 * The workspace's MCP server registry and lists applied to a tool call named as the harnesses
 * name an MCP server's tools, `mcp__<server>__<tool>` (seed 001: mcpDefaultPolicy,
 * mcpAllowedServers, mcpAllowedTools; seed 002: the SERVER_BLOCKED, SERVER_HELD,
 * SERVER_NOT_APPROVED, SERVER_NOT_ALLOWED and TOOL_DISABLED codes).
 */

export interface McpPolicy {
  readonly defaultPolicy?: 'allow' | 'deny' | undefined;
  readonly allowedServers?: readonly string[] | undefined;
  readonly allowedTools?: readonly string[] | undefined;
  /** The registry's word on each server it knows, by name. */
  readonly servers?: Readonly<Record<string, McpServerView>> | undefined;
}

export interface McpRefusal {
  readonly code: 'SERVER_BLOCKED' | 'SERVER_HELD' | 'SERVER_NOT_APPROVED' | 'SERVER_NOT_ALLOWED' | 'TOOL_DISABLED';
  /** The setting (or the registry) that refused the call. */
  readonly rule: 'mcpRegistry' | 'mcpDefaultPolicy' | 'mcpAllowedServers' | 'mcpAllowedTools';
  readonly reason: string;
}

/** The workspace settings' MCP lists (and the registry's word, when known) as the verdict reads them. */
export function mcpPolicyFrom(
  settings: { readonly mcpDefaultPolicy?: 'allow' | 'deny' | undefined; readonly mcpAllowedServers?: readonly string[] | undefined; readonly mcpAllowedTools?: readonly string[] | undefined },
  servers?: Readonly<Record<string, McpServerView>>,
): McpPolicy {
  return { defaultPolicy: settings.mcpDefaultPolicy, allowedServers: settings.mcpAllowedServers, allowedTools: settings.mcpAllowedTools, ...(servers === undefined ? {} : { servers }) };
}

const MCP_NAME = /^mcp__(.+?)__(.+)$/;

/** The server and tool of an `mcp__<server>__<tool>` name; null for any other tool. */
export function parseMcpToolName(name: string): { server: string; tool: string } | null {
  const m = MCP_NAME.exec(name);
  return m === null ? null : { server: m[1]!, tool: m[2]! };
}

export function mcpPolicyActive(policy: McpPolicy | undefined): boolean {
  return (
    policy !== undefined &&
    (policy.defaultPolicy === 'deny' || (policy.allowedServers?.length ?? 0) > 0 || (policy.allowedTools?.length ?? 0) > 0 || Object.keys(policy.servers ?? {}).length > 0)
  );
}

/**
 * Why the registry or the lists refuse the call, or null. A server the registry blocks or holds
 * is refused first. Under `deny` a server must be approved: by the registry, or by being named on
 * mcpAllowedServers (an owner's or admin's write too). An empty or absent list allows any server
 * or tool. A tool is on mcpAllowedTools, or switched off in the registry, by its full `mcp__…`
 * name or its own name.
 */
export function mcpRefusal(toolName: string, policy: McpPolicy | undefined): McpRefusal | null {
  if (policy === undefined) return null;
  const parsed = parseMcpToolName(toolName);
  if (parsed === null) return null;
  const servers = policy.allowedServers ?? [];
  const entry = policy.servers?.[parsed.server];
  if (entry?.status === 'blocked') return { code: 'SERVER_BLOCKED', rule: 'mcpRegistry', reason: `MCP server '${parsed.server}' is blocked in the registry` };
  if (entry?.status === 'held') {
    return { code: 'SERVER_HELD', rule: 'mcpRegistry', reason: `MCP server '${parsed.server}' changed its tools in a way scored high risk and waits for re-approval` };
  }
  if (policy.defaultPolicy === 'deny' && entry?.status !== 'approved' && !servers.includes(parsed.server)) {
    return { code: 'SERVER_NOT_APPROVED', rule: 'mcpDefaultPolicy', reason: `MCP server '${parsed.server}' is not approved and the workspace denies unapproved servers` };
  }
  if (servers.length > 0 && !servers.includes(parsed.server)) {
    return { code: 'SERVER_NOT_ALLOWED', rule: 'mcpAllowedServers', reason: `MCP server '${parsed.server}' is not on mcpAllowedServers` };
  }
  if (entry !== undefined && (entry.disabledTools.includes(parsed.tool) || entry.disabledTools.includes(toolName))) {
    return { code: 'TOOL_DISABLED', rule: 'mcpRegistry', reason: `tool '${parsed.tool}' is switched off on MCP server '${parsed.server}'` };
  }
  const tools = policy.allowedTools ?? [];
  if (tools.length > 0 && !tools.includes(toolName) && !tools.includes(parsed.tool)) {
    return { code: 'TOOL_DISABLED', rule: 'mcpAllowedTools', reason: `tool '${parsed.tool}' of MCP server '${parsed.server}' is not on mcpAllowedTools` };
  }
  return null;
}
