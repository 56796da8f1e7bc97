import { startMockProvider } from '/work/main/bench/mock/provider.js';
import { execFile } from 'node:child_process';
const mock = await startMockProvider({ port: 5099 });
mock.setScript({ steps: [{ tool: { name: 'exec_command', input: { cmd: 'touch sentinel.txt' } } }, { text: 'done' }] });
const out = await new Promise((resolve) => { const c = execFile('/work/main/node_modules/.bin/codex', ['exec', '--skip-git-repo-check', '-s', 'workspace-write', '-m', 'gpt-5.1-codex', 'create it'], { env: { ...process.env, HOME: process.cwd() + '/../home', CODEX_HOME: process.cwd() + '/../home/.codex', K: 'x' } }, (err, stdout, stderr) => resolve(String(stdout) + String(stderr))); c.stdin.end(); });
process.stdout.write(out.slice(-1500) + '\n---\n');
for (const r of mock.requests) process.stdout.write(r.route + ' ' + JSON.stringify(r.body?.input ?? '').slice(-600) + '\n');
await mock.close();
