import { startMockProvider } from '/work/main/bench/mock/provider.js';
import { spawnSync } from 'node:child_process';
const mock = await startMockProvider({ port: 5099 });
mock.setScript({ steps: [{ tool: { name: 'exec_command', input: { cmd: 'touch sentinel.txt' } } }, { text: 'done' }] });
const { execFileSync } = await import('node:child_process');
const out = await new Promise((resolve) => {
  import('node:child_process').then(({ execFile }) => execFile('/work/main/node_modules/.bin/codex', ['exec', '--skip-git-repo-check', '-s', 'workspace-write', '-m', 'gpt-5.1-codex', 'create it'], { cwd: process.cwd(), env: { ...process.env, HOME: process.cwd() + '/../home', CODEX_HOME: process.cwd() + '/../home/.codex', K: 'x' } }, (err, stdout, stderr) => resolve(stdout + stderr)));
});
const outputs = mock.requests.filter((r) => r.route === 'responses').map((r) => JSON.stringify(r.body.input).slice(-700));
console.log(outputs.join('\n').slice(0, 1500));
await mock.close();
