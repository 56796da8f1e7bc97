import t from 'tap';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { CLI, spawnProxy } from '../helpers/proxy.js';

const RECORD_MODULES = pathToFileURL(join(import.meta.dirname, '../fixtures/cli/record-modules.mjs')).href;

t.test('svc proxy loads the proxy, not the other commands\' modules', async (t) => {
  const dir = t.testdir();
  const log = join(dir, 'modules.log');
  const proxy = await spawnProxy(t, ['--io-threads', '1'], {
    SVC_HOME: dir,
    SVC_TEST_MODULE_LOG: log,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${RECORD_MODULES}`,
  });
  proxy.child.kill('SIGTERM');
  t.equal(await proxy.exited, 0);
  const modules = await readFile(log, 'utf8');
  t.match(modules, /node_modules\/undici\//, 'what the proxy needs is loaded (the log works)');
  for (const other of ['@inquirer/', '@modelcontextprotocol/sdk', 'dist/cli/mcp-command.js', 'dist/cli/init-command.js']) {
    t.notOk(modules.includes(other), `${other} is not loaded`);
  }
});

t.test('every other command is still registered', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, '--help']);
  for (const command of ['proxy', 'controlplane', 'mcp', 'init', 'gate', 'decision', 'connect', 'exec']) t.match(stdout, new RegExp(`\\n  ${command}\\b`), command);
  const proxyHelp = await promisify(execFile)(process.execPath, [CLI, 'proxy', '--help']);
  t.match(proxyHelp.stdout, /--io-threads/);
});
