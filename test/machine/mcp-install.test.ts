import t from 'tap';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { mcpConfigTargets, rewriteMcpConfigs } from '../../src/machine/mcp-install.js';
import { svc } from '../helpers/wasm.js';

const SVC: readonly [string, string] = ['/usr/bin/node', '/opt/svc/dist/cli/main.js'];

function write(file: string, value: unknown, indent = 4): string {
  mkdirSync(join(file, '..'), { recursive: true });
  const text = `${JSON.stringify(value, null, indent)}\n`;
  writeFileSync(file, text);
  return text;
}

const read = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

t.test('install wraps every stdio server of each harness file, leaves HTTP ones, and is idempotent; uninstall puts back the bytes', async (t) => {
  const home = t.testdir();
  const project = join(home, 'work', 'app');
  const projectMcp = write(join(project, '.mcp.json'), { mcpServers: { fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: { DEBUG: '1' } }, docs: { type: 'http', url: 'https://docs.example/mcp' } } });
  const claudeUser = write(join(home, '.claude.json'), {
    numStartups: 12,
    mcpServers: { github: { type: 'stdio', command: 'github-mcp', env: { GITHUB_TOKEN: 'x' } } },
    projects: { '/work/app': { allowedTools: [], mcpServers: { sqlite: { command: 'uvx', args: ['mcp-server-sqlite'] } } } },
  });
  const cursor = write(join(home, '.cursor', 'mcp.json'), { mcpServers: { memory: { command: 'npx', args: ['@modelcontextprotocol/server-memory'] } } }, 2);
  const gemini = write(join(home, '.gemini', 'settings.json'), { theme: 'Dracula', mcpServers: { remote: { httpUrl: 'https://x.example/mcp' }, local: { command: 'python', args: ['server.py'], cwd: './mcp' } } });
  const targets = mcpConfigTargets(home, project);

  const dry = await rewriteMcpConfigs(targets, 'install', { dryRun: true, svcCommand: SVC });
  t.same(dry.map((c) => c.changed).flat().sort(), ['fs', 'github', 'local', 'memory', 'sqlite']);
  t.equal(readFileSync(join(project, '.mcp.json'), 'utf8'), projectMcp, 'a dry run changes nothing');

  const installed = await rewriteMcpConfigs(targets, 'install', { dryRun: false, svcCommand: SVC });
  t.match(installed.find((c) => c.file.endsWith('.mcp.json')), { harness: 'claude-code', changed: ['fs'], overHttp: ['docs'], backup: /\.mcp\.json\.svc-backup$/ });
  t.same(read(join(project, '.mcp.json')).mcpServers.fs, {
    command: SVC[0],
    args: [SVC[1], 'mcp', 'wrap', '--server', 'fs', '--', 'npx', '-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
    env: { DEBUG: '1' },
  });
  t.same(read(join(project, '.mcp.json')).mcpServers.docs, { type: 'http', url: 'https://docs.example/mcp' }, 'an HTTP server is left as it is');
  const user = read(join(home, '.claude.json'));
  t.equal(user.numStartups, 12, 'the rest of the file is kept');
  t.same(user.mcpServers.github, { type: 'stdio', command: SVC[0], env: { GITHUB_TOKEN: 'x' }, args: [SVC[1], 'mcp', 'wrap', '--server', 'github', '--', 'github-mcp'] });
  t.same(user.projects['/work/app'].mcpServers.sqlite.args, [SVC[1], 'mcp', 'wrap', '--server', 'sqlite', '--', 'uvx', 'mcp-server-sqlite'], "a project's servers in the user file too");
  t.same(read(join(home, '.gemini', 'settings.json')).mcpServers.local.cwd, './mcp', 'cwd kept');
  t.equal(readFileSync(join(project, '.mcp.json.svc-backup'), 'utf8'), projectMcp, 'the original is kept beside it');

  const afterFirst = readFileSync(join(home, '.claude.json'), 'utf8');
  const again = await rewriteMcpConfigs(targets, 'install', { dryRun: false, svcCommand: SVC });
  t.same(again.flatMap((c) => c.changed), [], 'a second install wraps nothing');
  t.equal(readFileSync(join(home, '.claude.json'), 'utf8'), afterFirst, 'and changes nothing');

  const uninstalled = await rewriteMcpConfigs(targets, 'uninstall', { dryRun: false, svcCommand: SVC });
  t.same(uninstalled.flatMap((c) => c.changed).sort(), ['fs', 'github', 'local', 'memory', 'sqlite']);
  t.equal(readFileSync(join(project, '.mcp.json'), 'utf8'), projectMcp, 'byte for byte');
  t.equal(readFileSync(join(home, '.claude.json'), 'utf8'), claudeUser);
  t.equal(readFileSync(join(home, '.cursor', 'mcp.json'), 'utf8'), cursor);
  t.equal(readFileSync(join(home, '.gemini', 'settings.json'), 'utf8'), gemini);
  t.notOk(existsSync(join(project, '.mcp.json.svc-backup')), 'the backup went back in place');
});

t.test('uninstall after the user changed the file: only the wrapped entries are put back, their later edits kept', async (t) => {
  const home = t.testdir();
  const file = join(home, '.cursor', 'mcp.json');
  write(file, { mcpServers: { memory: { command: 'npx', args: ['server-memory'] } } });
  const targets = mcpConfigTargets(home, join(home, 'p'), ['cursor']);
  await rewriteMcpConfigs(targets, 'install', { dryRun: false, svcCommand: SVC });
  const config = read(file);
  config.mcpServers.added = { command: 'added-later' };
  config.mcpServers.memory.env = { LEVEL: 'debug' };
  writeFileSync(file, JSON.stringify(config));
  await rewriteMcpConfigs(targets, 'uninstall', { dryRun: false, svcCommand: SVC });
  t.same(read(file), { mcpServers: { memory: { command: 'npx', args: ['server-memory'], env: { LEVEL: 'debug' } }, added: { command: 'added-later' } } });
  t.ok(existsSync(`${file}.svc-backup`), 'the backup stays when the file is not the original any more');
});

t.test('a file that is not JSON is reported and left untouched; the other files are still done', async (t) => {
  const home = t.testdir();
  const broken = join(home, '.claude.json');
  mkdirSync(home, { recursive: true });
  writeFileSync(broken, '{ "mcpServers": { oops');
  write(join(home, '.cursor', 'mcp.json'), { mcpServers: { memory: { command: 'npx' } } });
  const changes = await rewriteMcpConfigs(mcpConfigTargets(home, join(home, 'p')), 'install', { dryRun: false, svcCommand: SVC });
  t.match(changes.find((c) => c.file === broken), { error: /is not valid JSON/, changed: [] });
  t.equal(readFileSync(broken, 'utf8'), '{ "mcpServers": { oops', 'untouched');
  t.equal(read(join(home, '.cursor', 'mcp.json')).mcpServers.memory.args[2], 'wrap');
});

t.test('svc mcp install / uninstall from the command line', async (t) => {
  const home = t.testdir();
  const project = join(home, 'proj');
  const original = write(join(project, '.mcp.json'), { mcpServers: { fs: { command: 'npx', args: ['server-filesystem', '.'] } } });
  writeFileSync(join(home, '.claude.json'), '[not json');
  const env = { HOME: home };
  const installed = await svc(['mcp', 'install', '--harness', 'claude-code', '--project', project], env);
  t.equal(installed.code, 1, 'an unreadable file makes the exit status 1');
  t.match(installed.stdout, /wrapped fs \(original kept in .*\.mcp\.json\.svc-backup\)/);
  t.match(installed.stdout, /\.claude\.json: left untouched: .*not valid JSON/);
  const wrapped = read(join(project, '.mcp.json')).mcpServers.fs;
  t.equal(wrapped.command, process.execPath);
  t.match(wrapped.args, [/dist\/cli\/main\.js$/, 'mcp', 'wrap', '--server', 'fs', '--', 'npx', 'server-filesystem', '.']);
  t.equal((await svc(['mcp', 'install', '--harness', 'nope'], env)).code, 2, 'an unknown harness is refused');
  writeFileSync(join(home, '.claude.json'), '{}');
  const removed = await svc(['mcp', 'uninstall', '--project', project], env);
  t.equal(removed.code, 0, removed.stderr);
  t.match(removed.stdout, /restored fs/);
  t.equal(readFileSync(join(project, '.mcp.json'), 'utf8'), original);
});
