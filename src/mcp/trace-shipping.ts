import { mkdir, readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import { TraceShipper } from '../traces/shipper.js';
import { TraceSpill } from '../traces/spill.js';
import { withoutTrailingSlashes } from '../lib/trailing-run.js';

/** Records one wrapper keeps on disk at most while the control plane cannot take them. */
const SPILL_MAX = 50_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Ships an MCP proxy's call traces to the control plane as a gateway ships its own, through a
 * spill of its own: `$SVC_HOME/mcp-traces-spill/<server>-<pid>`. Many wrappers of one server run
 * at once (one per harness session), so each spills alone; a wrapper starting adopts the spill a
 * dead one left, so its records are delivered by the next start.
 */
export async function mcpTraceShipper(opts: { home: string; server: string; controlPlaneUrl: string; apiKey: string; logger: Logger }): Promise<TraceShipper> {
  const root = join(opts.home, 'mcp-traces-spill');
  await mkdir(root, { recursive: true, mode: 0o700 });
  const prefix = `${opts.server.replace(/[^A-Za-z0-9._-]/g, '_')}-`;
  const own = join(root, `${prefix}${process.pid}`);
  for (const name of await readdir(root)) {
    const pid = Number(name.slice(prefix.length));
    if (!name.startsWith(prefix) || !Number.isInteger(pid) || pid === process.pid || alive(pid)) continue;
    try {
      await rename(join(root, name), own);
      break;
    } catch {
      // Another wrapper adopted it first, or this one already has a spill: the next start takes it.
    }
  }
  const spill = await TraceSpill.open(own, SPILL_MAX, opts.logger);
  return new TraceShipper({ controlPlaneUrl: withoutTrailingSlashes(opts.controlPlaneUrl), apiKey: opts.apiKey, spill, logger: opts.logger });
}
