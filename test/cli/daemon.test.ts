import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { svc } from '../helpers/wasm.js';

const systemdAnalyze = spawnSync('systemd-analyze', ['--version'], { stdio: 'ignore' }).status === 0;

t.test('svc daemon install --dry-run: a valid systemd unit that restarts on any exit, secrets in a 0600 environment file', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'svc-daemon-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const env = { HOME: home, SVC_HOME: join(home, '.svc'), SVC_API_KEY: '', SVC_CONTROL_PLANE_URL: '' };
  const missing = await svc(['daemon', 'install', '--dry-run'], env);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /needs --workspace-id and --api-key/);

  const dry = await svc(['daemon', 'install', '--dry-run', '--workspace-id', 'ws_1', '--api-key', 'vk_abcdef123456', '--control-plane-url', 'http://127.0.0.1:3001'], env);
  t.equal(dry.code, 0, dry.stderr);
  t.match(dry.stdout, new RegExp(`^# ${join(home, '.config', 'systemd', 'user', 'svc-connect.service')}\n\\[Unit\\]`));
  t.match(dry.stdout, /ExecStart=\S+node \S+main\.js connect\n/);
  t.match(dry.stdout, /Restart=always\n/);
  t.match(dry.stdout, /SVC_API_KEY="vk_abc…"/, 'the key is masked in the dry run');
  t.notMatch(dry.stdout, /vk_abcdef123456/);
  t.match((await svc(['daemon', 'install', '--dry-run', '--proxy', '--port', '4100', '--upstream-url', 'http://127.0.0.1:5001'], env)).stdout, /ExecStart=.* proxy --port 4100 --upstream-url http:\/\/127\.0\.0\.1:5001\n/);
  t.match((await svc(['daemon', 'install', '--dry-run', '--mcp', '--workspace-id', 'ws_1', '--api-key', 'vk_abcdef123456'], env)).stdout, /svc-mcp-daemon\.service[\s\S]*main\.js mcp daemon\n/);

  if (!systemdAnalyze) {
    t.comment('systemd-analyze is not installed here: the unit is not verified');
    return;
  }
  const unit = /\[Unit\][\s\S]*?WantedBy=default\.target\n/.exec(dry.stdout)![0];
  mkdirSync(join(home, '.svc'), { recursive: true });
  writeFileSync(join(home, '.svc', 'svc-connect.env'), 'SVC_HOME=/tmp\n');
  const file = join(home, 'svc-connect.service');
  writeFileSync(file, unit);
  t.doesNotThrow(() => execFileSync('systemd-analyze', ['verify', file], { stdio: 'pipe' }), 'systemd-analyze verify accepts it');
});
