import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, memberWithRole, signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { SwitchableLink } from '../helpers/link.js';
import { svcWithStdin } from '../helpers/wasm.js';

t.setTimeout(600_000);

const svcIn = (cwd: string, args: string[], env: NodeJS.ProcessEnv) => svcWithStdin(args, '', env, cwd);

const KEY = 'sk-proj-' + 'Qw3eR5tY7uI9oP1aS3dF5gH7';
const ANTHROPIC = 'sk-ant-' + 'api03-Lk8Jh6Gf4Ds2Aq0Wz9Xc7Vb5';

t.test('svc skill list / audit against a real control plane: findings, deletion gated by enableLocalSkillAuditDelete, offline refusal', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const dev = await memberWithRole(cp, owner, 'DEVELOPER');
  const root = mkdtempSync(join(tmpdir(), 'svc-skill-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  const project = join(root, 'project');
  const wasm = join(root, 'wasm');
  for (const d of [join(project, '.claude', 'skills', 'deploy'), join(project, '.agents', 'skills', 'notes', 'scripts'), join(home, '.claude', 'skills', 'cleanup'), join(project, '.svc', 'sops'), wasm]) mkdirSync(d, { recursive: true });
  const deployMd = join(project, '.claude', 'skills', 'deploy', 'SKILL.md');
  writeFileSync(deployMd, '# Deploy\n\nUse the key below.\n\nOPENAI_API_KEY=' + KEY + '\nThen deploy with `make deploy`.\n');
  const notesSh = join(project, '.agents', 'skills', 'notes', 'scripts', 'reset.sh');
  writeFileSync(notesSh, '#!/bin/sh\nexport TOKEN=$NOTES_TOKEN\nrm -rf ./build\nrm -rf "$NOTES_ROOT/"*\n');
  writeFileSync(join(project, '.agents', 'skills', 'notes', 'SKILL.md'), '# Notes\n\nRun scripts/reset.sh.\n');
  const cleanupMd = join(home, '.claude', 'skills', 'cleanup', 'SKILL.md');
  writeFileSync(cleanupMd, '# Cleanup\n\nfind . -name "*.pyc" -delete\n');
  const sop = join(project, '.svc', 'sops', 'ops.md');
  writeFileSync(sop, '---\ntitle: Ops\n---\nNever hand anyone the root password.\nchmod -R 777 *\n');
  const rule = join(wasm, '100_guard.wasm');
  writeFileSync(rule, Buffer.concat([Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 0]), Buffer.from(`key:${ANTHROPIC}`), Buffer.from([0])]));
  const env = { HOME: home, SVC_HOME: join(root, 'svc'), SVC_WASM_DIR: wasm, SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: dev.apiKey };
  const offline = { ...env, SVC_CONTROL_PLANE_URL: '', SVC_API_KEY: '' };

  const listed = await svcIn(project, ['skill', 'list', '--json'], offline);
  t.equal(listed.code, 0, listed.stderr);
  const list = JSON.parse(listed.stdout);
  t.match(list.skills, [
    { name: 'notes', folder: join(project, '.agents', 'skills'), description: join(project, '.agents', 'skills', 'notes', 'SKILL.md'), sha256: /^[0-9a-f]{64}$/, files: [String, String] },
    { name: 'deploy', folder: join(project, '.claude', 'skills'), files: [deployMd] },
    { name: 'cleanup', folder: join(home, '.claude', 'skills'), files: [cleanupMd] },
  ]);
  t.same(list.rules.map((r: { kind: string; path: string }) => [r.kind, r.path]), [['wasm', rule], ['sop', sop]]);
  t.match((await svcIn(project, ['skill', 'list'], offline)).stdout, /^skill bundles\n(?: .*\n)* +\S+\/deploy  1 file, SKILL\.md [0-9a-f]{12}\n/);

  const audited = await svcIn(project, ['skill', 'audit', '--json'], offline);
  t.equal(audited.code, 1, 'exit 1 while findings exist');
  t.notMatch(audited.stdout, KEY.slice(8), 'the secret itself is never printed');
  t.notMatch(audited.stdout, ANTHROPIC.slice(7));
  const report = JSON.parse(audited.stdout);
  t.equal(report.scanned, 6);
  const row = (f: { file: string; line: number | null; kind: string }) => `${f.file}:${f.line}:${f.kind}`;
  t.same(report.findings.map(row).sort(), [`${rule}:null:credential`, `${sop}:5:wildcard_file_operation`, `${notesSh}:4:wildcard_file_operation`, `${deployMd}:5:credential`].sort());
  t.match(report.findings.find((f: { file: string }) => f.file === deployMd), { detail: 'api_key', excerpt: 'OPENAI_API_KEY=[REDACTED:api_key]' });
  const text = await svcIn(project, ['skill', 'audit'], offline);
  t.match(text.stdout, new RegExp(`${notesSh}:4: wildcard_file_operation \\(rm \\(recursive\\) on \\$NOTES_ROOT/\\*: an unguarded \\$VAR/ root\\): rm -rf "\\$NOTES_ROOT/"\\*`));
  t.match(text.stdout, /^4 findings in 4 of 6 files$/m);

  const before = [deployMd, notesSh, sop].map((f) => readFileSync(f, 'utf8'));
  const unchanged = () => t.same([deployMd, notesSh, sop].map((f) => readFileSync(f, 'utf8')), before, 'nothing was deleted');

  const notLoggedIn = await svcIn(project, ['skill', 'audit', '--delete', '--yes'], offline);
  t.equal(notLoggedIn.code, 1);
  t.match(notLoggedIn.stderr, /nothing deleted: deletion needs the workspace setting enableLocalSkillAuditDelete, which could not be read: not logged in/);
  unchanged();

  const off = await svcIn(project, ['skill', 'audit', '--delete', '--yes'], env);
  t.equal(off.code, 1);
  t.match(off.stderr, new RegExp(`enableLocalSkillAuditDelete is off in workspace ${owner.workspaceId}`));
  unchanged();

  t.equal((await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { enableLocalSkillAuditDelete: true } })).status, 200);
  const unasked = await svcIn(project, ['skill', 'audit', '--delete'], env);
  t.equal(unasked.code, 1);
  t.match(unasked.stderr, /not a terminal: add --yes to delete without being asked/);
  unchanged();

  const port = Number(new URL(cp.url).port);
  const link = await SwitchableLink.open(t, { host: '127.0.0.1', port });
  await link.down();
  const down = await svcIn(project, ['skill', 'audit', '--delete', '--yes'], { ...env, SVC_CONTROL_PLANE_URL: link.url });
  t.equal(down.code, 1);
  t.match(down.stderr, /could not be read: the control plane could not be reached/);
  unchanged();

  const deleted = await svcIn(project, ['skill', 'audit', '--delete', '--yes', '--json'], env);
  t.equal(deleted.code, 1, 'the compiled rule is not edited, so a finding remains');
  const outcome = JSON.parse(deleted.stdout);
  t.match(outcome, { refused: null, remaining: 1 });
  t.match(outcome.deletions.find((d: { file: string }) => d.file === rule), { deleted: false, reason: /binary rule file/ });
  t.equal(readFileSync(deployMd, 'utf8'), '# Deploy\n\nUse the key below.\n\nThen deploy with `make deploy`.\n', 'only the flagged line goes');
  t.equal(readFileSync(notesSh, 'utf8'), '#!/bin/sh\nexport TOKEN=$NOTES_TOKEN\nrm -rf ./build\n');
  t.equal(readFileSync(sop, 'utf8'), '---\ntitle: Ops\n---\nNever hand anyone the root password.\n');
  t.equal(readFileSync(cleanupMd, 'utf8'), '# Cleanup\n\nfind . -name "*.pyc" -delete\n', 'a clean file is untouched');

  rmSync(rule);
  const clean = await svcIn(project, ['skill', 'audit'], offline);
  t.equal(clean.code, 0, clean.stdout);
  t.match(clean.stdout, /^0 findings in 0 of 5 files$/m);
});
