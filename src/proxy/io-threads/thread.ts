/**
 * An I/O thread of `svc proxy --io-threads N`: a whole edge (uWS on the shared port, its own
 * upstream pools, inspection and WASM rules) whose shared state is the main thread's, reached
 * over the channel to it (see api.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { DecideRuntime } from '../../decide/runtime.js';
import { createLogger } from '../../lib/logger.js';
import { RpcChannel } from '../../lib/rpc.js';
import { ModelCatalog } from '../../upstream/catalog.js';
import { ProxyServer } from '../server.js';
import type { HubApi, ThreadApi, ThreadData } from './api.js';
import { RemoteClusterView, RemoteHolds, RemoteSessionJudge, RemoteStore, RemoteTraces } from './remotes.js';

/** How often the thread tells the main thread its requests in flight, when the count changed. */
const INFLIGHT_REPORT_MS = 1000;

const data = workerData as ThreadData;
const logger = createLogger().child({ ioThread: data.index });
let server: ProxyServer | undefined;

const handlers: ThreadApi = {
  setConfig: (config) => server!.setConfig(config),
  state: () => server!.threadState(),
  metrics: () => server!.metricsSnapshot(),
  close: async (drainMs) => {
    clearInterval(reporter);
    await server?.close(drainMs);
    // Nothing else keeps the thread alive once its server and this channel are closed; by the
    // next turn this answer is queued, and it leaves first.
    setImmediate(() => {
      hub.flush();
      parentPort!.close();
    });
  },
};
const hub = new RpcChannel<HubApi>(parentPort!, handlers);

let reported = 0;
const reporter = setInterval(() => {
  const count = server?.inflightCount ?? 0;
  if (count === reported) return;
  reported = count;
  hub.notify('inflight', data.index, count);
}, INFLIGHT_REPORT_MS);
reporter.unref();

try {
  const loadDecide = DecideRuntime.loader({ env: process.env, root: data.decideRoot, logger });
  server = new ProxyServer({
    host: data.host,
    port: data.port,
    config: data.config,
    catalog: ModelCatalog.load(),
    sink: new RemoteTraces(hub),
    logger,
    threads: data.inspectionThreads,
    store: new RemoteStore(hub, data.storeKind),
    decide: await loadDecide(data.config.decideRules),
    loadDecide,
    holds: data.holds ? new RemoteHolds(hub) : undefined,
    sessions: new RemoteSessionJudge(hub),
    cluster: new RemoteClusterView(hub),
    sharedPort: true,
    processMetrics: false,
  });
  await server.listen();
  hub.notify('ready', data.index, null);
} catch (err) {
  logger.error({ err }, 'I/O thread could not start');
  hub.notify('ready', data.index, err instanceof Error ? err.message : String(err));
}
