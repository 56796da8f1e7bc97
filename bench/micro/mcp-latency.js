// @ts-check
/**
 * What `svc mcp wrap` adds to a tool call: the official MCP SDK client calls server-everything's
 * `echo` straight over stdio, then through the wrapper (the real CLI from dist/, default policy:
 * no settings, so the machine's DLP defaults and the injection classifier run), alternating in
 * rounds so both sides see the same machine. Figures are per call, round trip as the client sees it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROUNDS = 10;
const CALLS_PER_ROUND = 100;
const EVERYTHING = fileURLToPath(new URL('../../node_modules/.bin/mcp-server-everything', import.meta.url));
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** @type {import('./index.js').MicroBenchmark} */
export const mcpLatencyBenchmark = {
  name: 'mcp-latency',
  description: 'svc mcp wrap in front of server-everything: p50/p99 µs per tools/call (echo) direct and wrapped, and what the wrapper adds',
  async run() {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const home = await mkdtemp(join(tmpdir(), 'svc-bench-mcp-'));
    /** @type {Array<InstanceType<typeof Client>>} */
    const clients = [];
    try {
      const connect = async (/** @type {string} */ command, /** @type {string[]} */ args) => {
        const client = new Client({ name: 'svc-bench', version: '1.0.0' });
        await client.connect(new StdioClientTransport({ command, args, env: { ...process.env, SVC_HOME: home, SVC_LOG_LEVEL: 'error' }, stderr: 'ignore' }));
        clients.push(client);
        return client;
      };
      const direct = await connect(EVERYTHING, []);
      const wrapped = await connect(process.execPath, [CLI, 'mcp', 'wrap', '--server', 'everything', '--', EVERYTHING]);
      /** @type {{ direct: number[], wrapped: number[] }} */
      const samples = { direct: [], wrapped: [] };
      const call = async (/** @type {InstanceType<typeof Client>} */ client, /** @type {number[]} */ into, /** @type {boolean} */ keep) => {
        const started = performance.now();
        await client.callTool({ name: 'echo', arguments: { message: 'how long does governance take?' } });
        if (keep) into.push((performance.now() - started) * 1000);
      };
      for (let i = 0; i < 50; i++) {
        await call(direct, samples.direct, false);
        await call(wrapped, samples.wrapped, false);
      }
      for (let round = 0; round < ROUNDS; round++) {
        for (let i = 0; i < CALLS_PER_ROUND; i++) await call(direct, samples.direct, true);
        for (let i = 0; i < CALLS_PER_ROUND; i++) await call(wrapped, samples.wrapped, true);
      }
      const p = (/** @type {number[]} */ xs, /** @type {number} */ q) => {
        const sorted = [...xs].sort((a, b) => a - b);
        return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
      };
      return {
        'direct p50 µs': p(samples.direct, 0.5),
        'direct p99 µs': p(samples.direct, 0.99),
        'wrapped p50 µs': p(samples.wrapped, 0.5),
        'wrapped p99 µs': p(samples.wrapped, 0.99),
        'added p50 µs': p(samples.wrapped, 0.5) - p(samples.direct, 0.5),
      };
    } finally {
      await Promise.all(clients.map((c) => c.close()));
      await rm(home, { recursive: true, force: true });
    }
  },
};
