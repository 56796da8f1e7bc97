// @ts-check
/**
 * A throwaway redis-server for scenarios whose proxy meters against Redis: a free loopback port,
 * nothing written to disk, killed when the scenario ends.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { track } from './children.js';

const READY_TIMEOUT_MS = 5_000;

/** @returns {Promise<number>} */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** @param {number} port */
function accepts(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** @returns {Promise<{ url: string, stop(): Promise<void> }>} */
export async function startRedis() {
  const port = await freePort();
  const child = track(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }));
  const exited = once(child, 'exit');
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('redis-server did not start (is it installed?)');
    await sleep(25);
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
