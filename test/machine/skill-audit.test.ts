import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditFile, auditLine, deleteLines, wildcardOperations } from '../../src/machine/skill-audit.js';

t.test('wildcard file operations: real shapes are flagged', async (t) => {
  const flagged = [
    'rm -rf *',
    'rm -rf /',
    'sudo rm -rf /*',
    'rm -fr ~/',
    'rm -Rf $HOME',
    'rm -rf "${HOME}"',
    'rm -rf "$STEAMROOT/"*',
    'rm -rf $BUILD_DIR/',
    'cd /tmp && rm -r --force .*',
    'rm -rf ../*',
    'rm **/*',
    'rm -rf -- /',
    'Run `rm -rf ./*` to start over.',
    'os.system("rm -rf ~/*")',
    'subprocess.run(["rm", "-rf", "/"])',
    'chmod -R 777 *',
    'chmod -R a+rwx /',
    'sudo chmod -R 777 .',
    'chown -R nobody:nogroup /',
    'find / -delete',
    'find . -type f -delete',
    'find ~ -exec rm -rf {} \\;',
    'find $HOME -mindepth 1 -delete',
    'shred -u *',
    'truncate -s 0 *',
    "sed -i 's/foo/bar/g' **/*",
    "perl -pi -e 's/a/b/' ./**/*",
    'Remove-Item -Recurse -Force *',
    'Remove-Item -Path C:\\ -Recurse',
    'rm -r -fo C:\\*',
    'del /s /q *',
    'rd /s /q C:\\',
    'Get-ChildItem | ri -Recurse $env:USERPROFILE',
    'shutil.rmtree("/")',
    "shutil.rmtree(os.path.expanduser('~'))",
    'shutil.rmtree(os.environ["WORKDIR"])',
    'shutil.rmtree(f"{root}/")',
    'fs.rmSync(os.homedir(), { recursive: true, force: true })',
    "await fs.promises.rm(process.cwd(), { recursive: true })",
    "rimraf.sync('**/*')",
    "await del(['**', '!dist'])",
    "fse.emptyDirSync('/')",
  ];
  for (const line of flagged) t.equal(wildcardOperations(line).length, 1, line);
});

t.test('wildcard file operations: benign look-alikes are not flagged', async (t) => {
  const benign = [
    'rm -rf ./build',
    'rm -rf node_modules dist',
    'rm -f *.log',
    'rm -rf dist/*',
    'rm -rf /tmp/svc-build',
    'rm -rf "${OUT_DIR:?}"/*',
    'rm -rf "$TMPDIR/svc-test"',
    'rm -rf .',
    'rm *',
    'git rm -r --cached .',
    'git rm -rf *',
    'docker run --rm -v /:/host alpine ls',
    'npm rm -g typescript',
    'chmod +x *.sh',
    'chmod -R 755 ./bin',
    'chmod -r secret.txt',
    'chown -R node:node .',
    "find . -name '*.pyc' -delete",
    "find /tmp/x -type f -name '*.tmp' -delete",
    'find . -empty -delete',
    'find / -name core -print',
    "sed -i 's/foo/bar/g' src/*.ts",
    "sed -i 's/foo/bar/g' **/*.md",
    'sed -n 1,5p *',
    'truncate -s 0 app.log',
    'Remove-Item .\\build -Recurse -Force',
    'Remove-Item -Force *',
    'del /q build\\*.obj',
    'rd /s /q build',
    'shutil.rmtree(tmp_dir)',
    'shutil.rmtree(os.path.join(root, "build"), ignore_errors=True)',
    'fs.rmSync(outDir, { recursive: true })',
    "rimraf('dist/**/*.map')",
    'items.remove("*")',
    'Never run rm -rf / on a server.',
    'The asterisk (*) matches any file; use it with care.',
    '# rm -rf / in a comment',
  ];
  for (const line of benign) t.same(wildcardOperations(line), [], line);
});

t.test('credentials: real shapes are flagged, redacted in the excerpt; references and placeholders are not', async (t) => {
  const key = 'sk-proj-' + 'Ab3dE6gH9jK2mN5pQ8sT1vW4';
  const aws = 'AKIA' + 'QWERTYUIOP123456';
  const cases = [
    `export OPENAI_API_KEY=${key}`,
    `const client = new OpenAI({ apiKey: "${key}" })`,
    `AWS_ACCESS_KEY_ID=${aws}`,
    'password = "hunter2-Prod!"',
    'curl -H "Authorization: Bearer 8f2a9c1d7e3b5f60a4c2"',
    'DATABASE_URL=postgres://app:s3cr3tPa55@db.internal:5432/app',
    '-----BEGIN RSA PRIVATE KEY-----',
  ];
  for (const line of cases) {
    const found = auditLine('f', 1, line).filter((f) => f.kind === 'credential');
    t.ok(found.length >= 1, line);
    for (const f of found) {
      t.notMatch(f.excerpt, key);
      t.notMatch(f.excerpt, aws);
      t.notMatch(f.excerpt, 'hunter2');
      t.notMatch(f.excerpt, 's3cr3tPa55');
      t.notMatch(f.excerpt, '8f2a9c1d7e3b5f60a4c2');
      t.match(f.excerpt, /\[REDACTED:/);
    }
  }
  const benign = [
    'export OPENAI_API_KEY=$OPENAI_API_KEY',
    'api_key = os.environ["OPENAI_API_KEY"]',
    'token: ${{ secrets.GITHUB_TOKEN }}',
    'const apiKey = process.env.ANTHROPIC_API_KEY;',
    'apiKey: "<your-api-key>"',
    'OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxx',
    'AWS_SECRET_ACCESS_KEY=AKIAIOSFODNN7EXAMPLE',
    'password: string;',
    'Password: required for the admin console',
    'token = get_token()',
    'secret = config.secret',
    'Set the token with `svc login`.',
    'Card for tests: 4539 1488 0343 6467',
  ];
  for (const line of benign) t.same(auditLine('f', 1, line).filter((f) => f.kind === 'credential'), [], line);
});

t.test('files: line numbers, binary strings, oversized files; flagged lines deleted byte for byte, inside the folder only', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-audit-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const bundle = join(dir, 'bundle');
  mkdirSync(bundle);
  const script = join(bundle, 'clean.sh');
  const text = '#!/bin/sh\r\necho start\r\nrm -rf "$ROOT/"*\r\nexport GITHUB_TOKEN=ghp_' + 'a'.repeat(4) + 'B7cD9eF1gH3iJ5kL7mN9oP1qR3sT5uV7wX9' + '\r\necho done\r\n';
  writeFileSync(script, text);
  chmodSync(script, 0o750);
  const scanned = await auditFile(script);
  t.match(scanned.findings, [
    { line: 3, kind: 'wildcard_file_operation', detail: /unguarded/ },
    { line: 4, kind: 'credential', detail: 'api_key', excerpt: 'export GITHUB_TOKEN=[REDACTED:api_key]' },
  ]);
  t.equal(scanned.findings.length, 2);

  const wasm = join(bundle, 'rule.wasm');
  writeFileSync(wasm, Buffer.concat([Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]), Buffer.from(`\u0000key=${'sk-ant-' + 'api03-Zx8Yw7Vu6Ts5Rq4Po3'}\u0000`)]));
  t.match((await auditFile(wasm)).findings, [{ line: null, offset: 13, kind: 'credential', detail: 'api_key' }]);
  const big = join(bundle, 'big.md');
  writeFileSync(big, 'x'.repeat(1024 * 1024 + 1));
  t.match(await auditFile(big), { skipped: /over 1 MiB/, findings: [] });

  await t.rejects(deleteLines(script, bundle, new Set([3, 4]), '0'.repeat(64)), /changed since it was scanned/);
  const outside = join(dir, 'outside.sh');
  writeFileSync(outside, 'rm -rf *\n');
  symlinkSync(outside, join(bundle, 'link.sh'));
  await t.rejects(deleteLines(join(bundle, 'link.sh'), bundle, new Set([1]), (await auditFile(outside)).sha256!), /is not inside/);
  t.equal(readFileSync(outside, 'utf8'), 'rm -rf *\n', 'a file outside the folder is left alone');

  await deleteLines(script, bundle, new Set([3, 4]), scanned.sha256!);
  t.equal(readFileSync(script, 'utf8'), '#!/bin/sh\r\necho start\r\necho done\r\n');
  t.equal(statSync(script).mode & 0o777, 0o750, 'the mode is kept');
});

t.test('the scan is linear: long adversarial lines finish quickly', async (t) => {
  const lines = [
    `rm ${'-r '.repeat(50_000)}x`,
    `${'password='.repeat(20_000)}`,
    `shutil.rmtree(${'('.repeat(100_000)}`,
    `find ${'/ '.repeat(50_000)}-delete`,
    'a'.repeat(500_000),
    `chmod ${'u'.repeat(1_000_000)}x file`,
    `rm -rf x${','.repeat(1_000_000)}x`,
  ];
  for (const line of lines) {
    const started = process.hrtime.bigint();
    auditLine('f', 1, line);
    // A generous bound (a loaded machine): quadratic work on these lines would take many minutes.
    t.ok(Number(process.hrtime.bigint() - started) / 1e9 < 60, `${line.slice(0, 20)}… in linear time`);
  }
});
