import t from 'tap';
import { execFile } from 'node:child_process';
import { cp, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { CLI, spawnProxy } from '../helpers/proxy.js';
import { svcWithStdin } from '../helpers/wasm.js';

const RECORD_MODULES = pathToFileURL(join(import.meta.dirname, '../fixtures/cli/record-modules.mjs')).href;

/** The environment of an `svc` run whose home is `dir` and which logs every module it loads to `log`, one URL a line. */
function recordingModules(dir: string): { env: NodeJS.ProcessEnv; log: string } {
  const log = join(dir, 'modules.log');
  return { log, env: { SVC_HOME: dir, HOME: dir, SVC_TEST_MODULE_LOG: log, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${RECORD_MODULES}` } };
}

t.test('svc proxy loads the proxy, not the other commands\' modules', async (t) => {
  const { env, log } = recordingModules(t.testdir());
  const proxy = await spawnProxy(t, ['--io-threads', '1'], env);
  proxy.child.kill('SIGTERM');
  t.equal(await proxy.exited, 0);
  const modules = await readFile(log, 'utf8');
  t.match(modules, /node_modules\/undici\//, 'what the proxy needs is loaded (the log works)');
  for (const other of ['@inquirer/', '@modelcontextprotocol/sdk', 'dist/cli/mcp-command.js', 'dist/cli/init-command.js']) {
    t.notOk(modules.includes(other), `${other} is not loaded`);
  }
  for (const library of ['libphonenumber-js', 'node_modules/tldts']) t.notOk(modules.includes(library), `${library} is not loaded: the default policy has no phone or email detector`);
});

t.test('every other command is still registered', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, '--help']);
  for (const command of ['proxy', 'controlplane', 'mcp', 'init', 'gate', 'decision', 'connect', 'exec']) t.match(stdout, new RegExp(`\\n  ${command}\\b`), command);
  const proxyHelp = await promisify(execFile)(process.execPath, [CLI, 'proxy', '--help']);
  t.match(proxyHelp.stdout, /--io-threads/);
});

/** The modules a run of `svc args…` loads, one URL a line. */
async function modulesOf(t: { testdir(): string }, args: string[]): Promise<string> {
  const dir = t.testdir();
  const { env, log } = recordingModules(dir);
  await promisify(execFile)(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, ...env } });
  return readFile(log, 'utf8');
}

t.test('a command loads its own modules, not every other command\'s', async (t) => {
  const modules = await modulesOf(t, ['rollback', '--json']);
  t.match(modules, /dist\/cli\/rollback-command\.js/, 'its own command module');
  for (const other of ['dist/cli/mcp-command.js', 'dist/cli/policy-command.js', 'dist/cli/admin-command.js', 'libphonenumber-js', '@modelcontextprotocol/sdk', '@inquirer/']) {
    t.notOk(modules.includes(other), `${other} is not loaded`);
  }
  const version = await modulesOf(t, ['--version']);
  t.notOk(/dist\/cli\/[a-z-]+-command\.js/.test(version), '--version loads no command');
});

t.test('each command module registers exactly the names it is loaded for', async (t) => {
  const { Command } = await import('commander');
  const { COMMAND_MODULES } = await import('../../src/cli/commands.js');
  const fail = (err: unknown): never => {
    throw err;
  };
  for (const entry of COMMAND_MODULES) {
    const program = new Command();
    (await entry.load())(program, fail);
    t.same(program.commands.map((c) => c.name()).sort(), [...entry.names].sort(), entry.names.join(', '));
  }
});

t.test('a name two modules share gets both: svc policy has the rule commands and the workspace policy\'s', async (t) => {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'policy', '--help']);
  for (const sub of ['compile', 'test', 'install', 'rollback', 'export']) t.match(stdout, new RegExp(`\\n  ${sub}\\b`), sub);
});

/** `svc gate hook claude-code` on an ordinary tool call, run from `cli` in `dir`: its exit code and the modules it loaded. */
async function hookModules(dir: string, cli: string): Promise<{ code: number; modules: string }> {
  const { env, log } = recordingModules(dir);
  const call = JSON.stringify({ session_id: 's1', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, cwd: dir });
  const { code } = await svcWithStdin(['gate', 'hook', 'claude-code'], call, env, dir, cli);
  return { code, modules: await readFile(log, 'utf8') };
}

/** Whether `loadHookBundle` from the build in `dist` takes its code cache, in a process of its own with no preloads. */
async function cacheUsedIn(dist: string): Promise<boolean> {
  const url = pathToFileURL(join(dist, 'cli/hook-bundle.js')).href;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', `const { loadHookBundle } = await import(${JSON.stringify(url)}); console.log(loadHookBundle()?.cacheUsed);`], {
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return stdout.trim() === 'true';
}

/** A copy of this build's dist/ in `root` (with node_modules linked), less the files `leaveOut` names. */
async function copyOfBuild(root: string, leaveOut: (path: string) => boolean): Promise<string> {
  await cp(join(CLI, '../..'), join(root, 'dist'), { recursive: true, filter: (path) => !leaveOut(path) });
  await symlink(join(CLI, '../../../node_modules'), join(root, 'node_modules'));
  return join(root, 'dist');
}

t.test('the hook gate runs from one precompiled file: none of its modules or zod\'s are loaded one by one', async (t) => {
  const { code, modules } = await hookModules(t.testdir(), CLI);
  t.equal(code, 0, 'the call is allowed');
  t.match(modules, /dist\/cli\/hook-bundle\.js/, 'the bundle\'s loader');
  for (const single of ['dist/gate/hook.js', 'dist/cli/gate-hook-command.js', 'node_modules/zod/', 'dist/cli/program.js']) {
    t.notOk(modules.includes(single), `${single} is not loaded`);
  }
  t.ok(await cacheUsedIn(join(CLI, '../..')), 'the code cache the build made is taken');
});

t.test('a bundle changed after its code cache was made is compiled afresh, not run from the cache', async (t) => {
  const root = t.testdir();
  const dist = await copyOfBuild(root, () => false);
  // The same length: V8 alone would take the cache and run the old code.
  const bundle = join(dist, 'cli/gate-hook.bundle.cjs');
  const text = await readFile(bundle, 'utf8');
  await writeFile(bundle, text.replace('the hook input is not JSON', 'the hook input is not Json'));
  t.notOk(await cacheUsedIn(dist), 'the cache is not taken');
  const { code } = await hookModules(root, join(dist, 'cli/main.js'));
  t.equal(code, 0, 'the hook still answers');
});

t.test('a build without the bundle runs the hook gate from its modules', async (t) => {
  const root = t.testdir();
  const dist = await copyOfBuild(root, (path) => /gate-hook\.bundle\./.test(path));
  const { code, modules } = await hookModules(root, join(dist, 'cli/main.js'));
  t.equal(code, 0, 'the call is allowed');
  t.match(modules, /dist\/cli\/gate-hook-command\.js/);
});

t.test('a hook gate that cannot load refuses the call in the harness\'s own protocol, as failClosed\'s default says', async (t) => {
  const root = t.testdir();
  const dist = await copyOfBuild(root, () => false);
  await writeFile(join(dist, 'cli/gate-hook.bundle.cjs'), "throw new Error('a broken build');\n");
  const call = JSON.stringify({ session_id: 's1', tool_name: 'Bash', tool_input: { command: 'ls' }, command: 'ls', cwd: root });
  const run = (harness: string) => svcWithStdin(['gate', 'hook', harness], call, { SVC_HOME: root, HOME: root }, root, join(dist, 'cli/main.js'));
  const claude = await run('claude-code');
  t.equal(claude.code, 2, 'Claude Code: exit 2 refuses the call');
  t.match(claude.stderr, /^\[Svc Governance\] BLOCKED: HOOK_GATE: GOVERNANCE_UNAVAILABLE: the hook gate failed: a broken build\./);
  const cursor = await run('cursor');
  t.equal(cursor.code, 0);
  t.match(JSON.parse(cursor.stdout), { permission: 'deny', agentMessage: /GOVERNANCE_UNAVAILABLE: the hook gate failed: a broken build/ });
});

t.test('svc mcp wrap starts the server before it loads the policy, and stops it when the policy cannot load', async (t) => {
  const root = t.testdir();
  const dist = await copyOfBuild(root, (path) => path.endsWith('mcp/wrap-session.js'));
  await cp(join(CLI, '../../../package.json'), join(root, 'package.json'));
  const marker = join(root, 'server-started');
  // The server notes that it ran, then reads its stdin to the end, as a stdio MCP server does.
  const server = ['sh', '-c', `echo started > '${marker}'; cat > /dev/null`];
  const { code, stderr } = await svcWithStdin(['mcp', 'wrap', '--server', 'probe', '--', ...server], '', { SVC_HOME: root, HOME: root }, root, join(dist, 'cli/main.js'));
  t.equal(code, 2, 'the wrapper fails');
  t.match(stderr, /wrap-session\.js/, 'naming what it could not load');
  t.equal(await readFile(marker, 'utf8'), 'started\n', 'the server had been started, and has ended before the wrapper');
});

t.test('svc mcp wrap on the default policy with no control plane loads neither undici nor the phone and email libraries', async (t) => {
  const dir = t.testdir();
  const { env, log } = recordingModules(dir);
  const { code } = await svcWithStdin(['mcp', 'wrap', '--server', 'probe', '--', 'sh', '-c', 'cat > /dev/null'], '', env, dir);
  t.equal(code, 0, 'the server ended with the harness\'s stdin, and the wrapper with it');
  const modules = await readFile(log, 'utf8');
  t.match(modules, /dist\/mcp\/governance\.js/, 'the policy was loaded (the log works)');
  t.match(modules, /dist\/policy\/dlp\/scanner\.js/);
  for (const library of ['node_modules/undici/', 'libphonenumber-js', 'node_modules/tldts']) t.notOk(modules.includes(library), `${library} is not loaded`);
});
