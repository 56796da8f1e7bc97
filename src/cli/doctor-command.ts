import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { homedir } from 'node:os';
import type { Command } from 'commander';
import { request } from 'undici';
import { ControlPlaneApi } from '../config/control-plane-api.js';
import { snapshotPath } from '../gate/sync.js';
import { readStoredCredentials } from '../machine/credentials.js';
import { PROXY_URL } from '../machine/exec.js';
import { GATE_HARNESSES, gateFileState, gateTargets } from '../machine/gates-install.js';
import { withoutTrailingSlashes } from '../lib/trailing-run.js';

type Outcome = 'ok' | 'warn' | 'fail';
interface Check {
  readonly name: string;
  readonly outcome: Outcome;
  readonly detail: string;
}

async function proxyHealth(url: string): Promise<Check> {
  try {
    const res = await request(`${url}/health`, { headersTimeout: 3000, bodyTimeout: 3000 });
    await res.body.dump();
    return { name: 'proxy health', outcome: res.statusCode === 200 ? 'ok' : 'fail', detail: `${url}/health answered ${res.statusCode}` };
  } catch (err) {
    return { name: 'proxy health', outcome: 'fail', detail: `${url} does not answer (${(err as Error).message}): start it with svc proxy or svc daemon install --proxy` };
  }
}

async function controlPlaneAuth(env: NodeJS.ProcessEnv): Promise<Check> {
  const stored = readStoredCredentials(env);
  const apiKey = env.SVC_API_KEY || stored?.apiKey;
  const url = env.SVC_CONTROL_PLANE_URL || stored?.controlPlaneUrl;
  if (!apiKey || !url) return { name: 'control-plane auth', outcome: 'warn', detail: 'not logged in (svc login): local enforcement only' };
  try {
    const me = await new ControlPlaneApi({ controlPlaneUrl: url, apiKey, timeoutMs: 3000 }).json<{ user: { email: string }; role: string }>('GET', '/auth/me');
    return { name: 'control-plane auth', outcome: 'ok', detail: `${me.user.email} (${me.role}) at ${url}` };
  } catch (err) {
    return { name: 'control-plane auth', outcome: 'fail', detail: (err as Error).message };
  }
}

/** The sync daemon keeps the snapshot fresh: stale after three default intervals without a change check is not knowable, so its age is reported. */
async function syncDaemon(env: NodeJS.ProcessEnv): Promise<Check> {
  const path = snapshotPath(env);
  try {
    const s = await stat(path);
    const ageMin = Math.round((Date.now() - s.mtimeMs) / 60_000);
    return { name: 'sync daemon', outcome: 'ok', detail: `policy snapshot at ${path}, last changed ${ageMin} min ago (svc connect rewrites it only when the policy changes)` };
  } catch {
    return { name: 'sync daemon', outcome: 'warn', detail: 'no policy snapshot: run svc gates sync, or svc connect / svc daemon install' };
  }
}

/** Each harness's gate file: present and recorded as svc wrote it. */
async function harnessDrift(home: string): Promise<Check> {
  const found: string[] = [];
  const missing: string[] = [];
  for (const target of gateTargets(home, GATE_HARNESSES)) {
    const { text, installed } = await gateFileState(target);
    if (text === null) continue;
    (installed ? found : missing).push(`${target.harness} (${createHash('sha256').update(text).digest('hex').slice(0, 12)})`);
  }
  if (missing.length > 0) return { name: 'harness config drift', outcome: 'fail', detail: `the gate is gone from ${missing.join(', ')}: run svc gates install` };
  return { name: 'harness config drift', outcome: found.length > 0 ? 'ok' : 'warn', detail: found.length > 0 ? `gates in ${found.join(', ')}` : 'no harness has a gate: run svc gates install' };
}

function daemonLog(home: string): Check {
  const units = ['svc-connect', 'svc-mcp-daemon', 'svc-proxy'].filter((u) => existsSync(`${home}/.config/systemd/user/${u}.service`) || existsSync(`/etc/systemd/system/${u}.service`));
  return units.length === 0
    ? { name: 'daemon log', outcome: 'warn', detail: 'no svc service installed (svc daemon install); logs of a foreground svc connect are on its stdout' }
    : { name: 'daemon log', outcome: 'ok', detail: `services ${units.join(', ')}: journalctl --user -u ${units[0]}` };
}

function keyValueStore(env: NodeJS.ProcessEnv): Promise<Check> {
  let host = '127.0.0.1';
  let port = 6379;
  if (env.SVC_VALKEY_URL) {
    try {
      const u = new URL(env.SVC_VALKEY_URL);
      host = u.hostname;
      port = Number(u.port) || 6379;
    } catch {
      return Promise.resolve({ name: 'key-value store', outcome: 'fail', detail: `SVC_VALKEY_URL is not a URL` });
    }
  }
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2000 });
    const done = (check: Check) => {
      socket.destroy();
      resolve(check);
    };
    socket.once('connect', () => done({ name: 'key-value store', outcome: 'ok', detail: `${host}:${port} accepts connections` }));
    socket.once('timeout', () => done({ name: 'key-value store', outcome: 'warn', detail: `${host}:${port} does not answer: budgets and caps are per process` }));
    socket.once('error', () => done({ name: 'key-value store', outcome: 'warn', detail: `nothing listens on ${host}:${port}: budgets and caps are per process` }));
  });
}

function caTrust(env: NodeJS.ProcessEnv): Check {
  const extra = env.NODE_EXTRA_CA_CERTS;
  if (extra) {
    try {
      const pem = readFileSync(extra, 'utf8');
      return pem.includes('BEGIN CERTIFICATE') ? { name: 'CA certificate trust', outcome: 'ok', detail: `NODE_EXTRA_CA_CERTS ${extra} is read` } : { name: 'CA certificate trust', outcome: 'fail', detail: `${extra} holds no PEM certificate` };
    } catch {
      return { name: 'CA certificate trust', outcome: 'fail', detail: `NODE_EXTRA_CA_CERTS ${extra} cannot be read` };
    }
  }
  const system = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt', '/etc/ssl/cert.pem'].find(existsSync);
  return system === undefined ? { name: 'CA certificate trust', outcome: 'warn', detail: 'no system CA bundle found' } : { name: 'CA certificate trust', outcome: 'ok', detail: `system CA bundle ${system}` };
}

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('seven checks in order: proxy health, control-plane auth, sync daemon, harness config drift, daemon log, key-value store, CA trust')
    .option('--proxy-url <url>', 'the proxy', PROXY_URL)
    .option('--json', 'as JSON', false)
    .action(async (opts: { proxyUrl: string; json: boolean }) => {
      const env = process.env;
      const home = env.HOME || homedir();
      const checks: Check[] = [];
      checks.push(await proxyHealth(withoutTrailingSlashes(opts.proxyUrl)));
      checks.push(await controlPlaneAuth(env));
      checks.push(await syncDaemon(env));
      checks.push(await harnessDrift(home));
      checks.push(daemonLog(home));
      checks.push(await keyValueStore(env));
      checks.push(caTrust(env));
      if (opts.json) process.stdout.write(`${JSON.stringify({ checks })}\n`);
      else process.stdout.write(`${checks.map((c, i) => `${i + 1}. ${c.outcome.toUpperCase().padEnd(4)} ${c.name}: ${c.detail}`).join('\n')}\n`);
      if (checks.some((c) => c.outcome === 'fail')) process.exitCode = 1;
    });
}
