import { Gate } from '../dist/gate/index.js';
const g = new Gate({ snapshotPath: process.env.SVC_HOME + '/hooks/policy-snapshot.rules', env: {} });
const calls = [['Bash', { command: 'git status && npm test' }], ['Bash', { command: 'kubectl get pods -n prod' }], ['mcp__fs__read', { path: 'a' }], ['Edit', { path: 'x', content: 'y' }]];
for (let i = 0; i < 2000; i++) await g.guard(...calls[i % 4]).catch(() => {});
const n = 20000; const t0 = process.cpuUsage(); const w0 = performance.now();
for (let i = 0; i < n; i++) await g.guard(...calls[i % 4]).catch(() => {});
const cpu = process.cpuUsage(t0); console.log('µs CPU/guard', ((cpu.user + cpu.system) / n).toFixed(1), 'wall µs', ((performance.now() - w0) * 1000 / n).toFixed(1));
