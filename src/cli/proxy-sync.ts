import { join } from 'node:path';
import { resolveGatewayId } from '../config/gateway-identity.js';
import { LastGoodConfig } from '../config/last-good.js';
import type { RuntimeConfig } from '../config/runtime.js';
import { ConfigSyncClient } from '../config/sync-client.js';
import { ControlPlaneApi } from '../config/control-plane-api.js';
import { runtimeConfigFromDocument, type LocalSources } from '../config/sync-runtime.js';
import { materializeWasmRules } from '../config/sync-wasm.js';
import { wasmDir } from '../policy/wasm/rule-files.js';
import type { Logger } from '../lib/logger.js';
import type { ProxyServer } from '../proxy/server.js';

/** What a config from the control plane is applied to. */
export type ConfigTarget = Pick<ProxyServer, 'setConfig' | 'inflightCount'>;
import { TraceDeadLetter } from '../traces/dead-letter.js';
import { TraceShipper } from '../traces/shipper.js';
import { TraceSpill } from '../traces/spill.js';
import { TraceJournal } from '../traces/journal.js';
import type { TraceRecord } from '../traces/trace.js';
import { withoutTrailingSlashes } from '../lib/trailing-run.js';

export interface ControlPlaneLinkOptions {
  controlPlaneUrl: string;
  apiKey: string;
  gatewayId: string | undefined;
  /** The local state folder (~/.svc). */
  home: string;
  local: LocalSources;
  pollIntervalMs: number;
  heartbeatIntervalMs: number;
  traceShipIntervalMs: number;
  traceSpillMax: number;
  logger: Logger;
}

/** A proxy's connection to its control plane: config in, heartbeats and traces out. */
export interface ControlPlaneLink {
  readonly gatewayId: string;
  readonly source: 'control-plane' | 'last-good';
  /** The config to serve with now. */
  readonly config: RuntimeConfig;
  readonly configVersion: number | undefined;
  /** The control plane's REST API with the gateway's key (holds, approvals, reports). */
  readonly api: ControlPlaneApi;
  /** Later configs go to this server (or every I/O thread's). */
  attach(server: ConfigTarget): void;
  forwardTrace(trace: TraceRecord, line: string): void;
  close(): Promise<void>;
}

/** Resolves the gateway, takes its first config (or the last good one) and starts syncing and shipping. */
export async function connectControlPlane(opts: ControlPlaneLinkOptions): Promise<ControlPlaneLink> {
  const controlPlaneUrl = withoutTrailingSlashes(opts.controlPlaneUrl);
  const syncDir = join(opts.home, 'sync');
  const gatewayId = await resolveGatewayId({ given: opts.gatewayId, controlPlaneUrl, apiKey: opts.apiKey, file: join(syncDir, 'gateways.json') });
  const spill = await TraceSpill.open(join(opts.home, 'traces-spill'), opts.traceSpillMax, opts.logger);
  const deadLetter = await TraceDeadLetter.open(join(opts.home, 'traces-dead-letter'), opts.traceSpillMax, opts.logger);
  const journal = await TraceJournal.open(join(opts.home, 'traces-journal'), opts.logger);
  const shipper = new TraceShipper({ controlPlaneUrl, apiKey: opts.apiKey, gatewayId, spill, journal, deadLetter, logger: opts.logger, intervalMs: opts.traceShipIntervalMs });
  let server: ConfigTarget | undefined;
  let config: RuntimeConfig | undefined;
  const client = new ConfigSyncClient({
    controlPlaneUrl,
    apiKey: opts.apiKey,
    gatewayId,
    lastGood: new LastGoodConfig(join(syncDir, 'last-good.json')),
    pollIntervalMs: opts.pollIntervalMs,
    heartbeatIntervalMs: opts.heartbeatIntervalMs,
    async apply(document) {
      const next = runtimeConfigFromDocument(document, opts.local);
      // The decide runtime is the part most likely to fail (a damaged pins file): built before any rule file is written.
      await server?.setConfig(next);
      config = next;
      const wasm = await materializeWasmRules(wasmDir(process.env, next.wasm.dir), document.config.wasmRules);
      if (wasm.written.length + wasm.removed.length > 0) opts.logger.info({ version: document.version, ...wasm }, 'WASM rules from the control plane installed');
    },
    heartbeat: () => ({ inflight: server?.inflightCount ?? 0, tracesSpilled: spill.size, tracesDropped: shipper.droppedCount, tracesDeadLettered: shipper.deadLetteredCount }),
    logger: opts.logger,
  });
  let source: 'control-plane' | 'last-good';
  try {
    source = await client.start();
  } catch (err) {
    await shipper.close();
    throw err;
  }
  return {
    gatewayId,
    source,
    get config() {
      return config!;
    },
    get configVersion() {
      return client.version;
    },
    api: new ControlPlaneApi({ controlPlaneUrl, apiKey: opts.apiKey }),
    attach: (s) => (server = s),
    forwardTrace: (trace, line) => shipper.enqueue(trace, line),
    async close() {
      client.close();
      await shipper.close();
    },
  };
}
