import { z } from 'zod';

/**
 * The device inventory report (seed 002 "Inventory objects"): what `svc connect` sends to
 * `POST /devices/report` and the control plane stores. Never file contents, environment values,
 * command lines or paths outside the home directory (sent as `[redacted]`).
 */

const text = (max: number) => z.string().min(1).max(max);
const iso = z.iso.datetime();

export const GATE_KINDS = ['hook', 'sdk', 'other_harness', 'bridge', 'none'] as const;

export const deviceReportSchema = z.strictObject({
  machine: z.strictObject({
    /** SHA-256 of hostname, platform and machine id. */
    fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
    hostname: text(255),
    platform: text(64),
    cliVersion: text(64),
    /** The connect workspace folder, relative to the home directory. */
    workspaceFolder: z.string().max(1024).nullable().default(null),
  }),
  harnesses: z
    .array(
      z.strictObject({
        type: text(64),
        version: z.string().max(64).nullable().default(null),
        connectConfigured: z.boolean(),
        gateKind: z.enum(GATE_KINDS),
        gateFile: z.string().max(1024).nullable().default(null),
        gateFileOnDisk: z.boolean(),
        gateInstalledAt: iso.nullable().default(null),
        lastGateEventAt: iso.nullable().default(null),
        lastGuardsDisabledAt: iso.nullable().default(null),
        disconnected: z.boolean().default(false),
      }),
    )
    .max(100),
  mcpServers: z
    .array(
      z.strictObject({
        name: text(256),
        harness: text(64),
        transport: z.enum(['stdio', 'http', 'sse']),
        fronted: z.boolean(),
        notFrontedReason: z.string().max(500).nullable().default(null),
        url: z.string().max(2048).nullable().default(null),
      }),
    )
    .max(1000),
  skills: z
    .array(
      z.strictObject({
        name: text(256),
        folder: text(1024),
        sha256: z.string().regex(/^[0-9a-f]{64}$/).nullable(),
        scanned: z.boolean(),
        findings: z.number().int().min(0).max(100_000),
        files: z.number().int().min(0).max(1_000_000),
      }),
    )
    .max(1000),
  /** FF_CONFIG_CAPTURE: the SHA-256 of each harness config file (never its content), to spot drift between reports. */
  configCapture: z
    .array(z.strictObject({ harness: text(64), file: text(1024), sha256: z.string().regex(/^[0-9a-f]{64}$/) }))
    .max(500)
    .nullable()
    .default(null),
  /** `svc disconnect`: the whole machine, or one harness. */
  disconnect: z.strictObject({ harness: text(64).nullable().default(null), reason: z.string().max(500).nullable().default(null) }).nullable().default(null),
});
export type DeviceReport = z.infer<typeof deviceReportSchema>;
export type DeviceReportInput = z.input<typeof deviceReportSchema>;

const TOKEN = /^(?=[^/]*[A-Za-z])(?=[^/]*\d)[A-Za-z0-9]{16,}$/;

/**
 * An MCP server's URL as inventory keeps it: no user name, password, query or fragment, and every
 * path segment of 16 or more mixed letters and digits (a token in the path) as `[redacted]`. Null
 * for something that is not a URL.
 */
export function redactMcpUrl(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  const path = url.pathname
    .split('/')
    .map((segment) => (TOKEN.test(segment) ? '[redacted]' : segment))
    .join('/');
  return `${url.protocol}//${url.host}${path}`;
}
