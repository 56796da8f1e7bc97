// @ts-check
/**
 * The benchmark's child processes: every one is tracked from the moment it is spawned and
 * killed when the benchmark exits, whether it finishes, fails or is interrupted.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { constants } from 'node:os';

/** @typedef {import('node:child_process').ChildProcess} ChildProcess */

const STDERR_TAIL_CHARS = 4096;
const READY_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 15_000;

/** @type {Set<ChildProcess>} */
const running = new Set();

/**
 * @template {ChildProcess} T
 * @param {T} child
 * @returns {T}
 */
export function track(child) {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

function killAll() {
  for (const child of running) child.kill('SIGKILL');
}

/** Installs the handlers that kill every tracked child on exit, SIGINT and SIGTERM. */
export function killChildrenOnExit() {
  process.once('exit', killAll);
  for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
    process.once(signal, () => {
      process.stderr.write(`bench: ${signal}, stopping\n`);
      process.exit(128 + constants.signals[signal]);
    });
  }
}

/**
 * @typedef {object} Server
 * @property {string} name
 * @property {number} pid
 * @property {string} url  the base URL announced on stdout
 * @property {string} readyLine
 * @property {() => boolean} running
 * @property {() => string} stderrTail  the last few KB written to stderr
 * @property {() => Promise<number | null>} stop  SIGTERM, then SIGKILL after a grace period; resolves with the exit code
 */

/**
 * @typedef {object} ServerSpec
 * @property {string} name  for messages
 * @property {string} script  the Node program
 * @property {string[]} args
 * @property {string[]} [nodeArgs]  options for node itself, before the script
 * @property {NodeJS.ProcessEnv} [env]
 */

/**
 * Runs a Node server program in a child process and waits for the first stdout line that
 * names an http:// URL.
 * @param {ServerSpec} spec
 * @returns {Promise<Server>}
 */
export async function startServer(spec) {
  const child = track(
    spawn(process.execPath, [...(spec.nodeArgs ?? []), spec.script, ...spec.args], {
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS);
  });
  const exited = /** @type {Promise<number | null>} */ (once(child, 'exit').then(([code]) => code));
  const stderrTail = () => stderr;
  const readyLine = await waitForReadyLine(spec.name, child, exited, stderrTail);
  const url = /** @type {RegExpExecArray} */ (/http:\/\/[^\s)]+/.exec(readyLine))[0];
  return {
    name: spec.name,
    pid: /** @type {number} */ (child.pid),
    url,
    readyLine,
    running: () => isRunning(child),
    stderrTail,
    stop: () => stopChild(child, exited),
  };
}

/**
 * @param {string} name
 * @param {ChildProcess} child
 * @param {Promise<number | null>} exited
 * @param {() => string} stderrTail
 * @returns {Promise<string>}
 */
function waitForReadyLine(name, child, exited, stderrTail) {
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => fail(`did not announce its URL within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
    /** @param {string} why */
    function fail(why) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${name} ${why}\n${stderrTail()}`));
    }
    let out = '';
    child.stdout?.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n').find((candidate) => candidate.includes('http://'));
      if (line === undefined || settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdout?.removeAllListeners('data').resume();
      resolve(line);
    });
    void exited.then((code) => fail(`exited with code ${code} before it was ready`));
  });
}

/** @param {ChildProcess} child */
function isRunning(child) {
  return child.exitCode === null && child.signalCode === null;
}

/**
 * @param {ChildProcess} child
 * @param {Promise<number | null>} exited
 */
async function stopChild(child, exited) {
  if (!isRunning(child)) return exited;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  const code = await exited;
  clearTimeout(timer);
  return code;
}
