import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Gate, SvcGateRefusal } from '../../src/gate/index.js';

interface Vector {
  name: string;
  snapshot: { workspace: string; body: string[]; tamper: boolean } | null;
  gate: { workspaceId: string; allowlist?: unknown };
  env?: Record<string, string>;
  tool: string;
  input: unknown;
  expected: string | null;
}

const { vectors } = JSON.parse(readFileSync(new URL('./vectors/gate.json', import.meta.url), 'utf8')) as { vectors: Vector[] };

/** The snapshot file a vector describes, as any gate implementation would build it. */
function snapshotFile(s: NonNullable<Vector['snapshot']>): string {
  const body = s.body.join('\n');
  const digest = createHash('sha256').update(s.tamper ? `${body}\ntampered` : body).digest('hex');
  return ['# conformance vector', `@workspace ${s.workspace}`, `@digest ${digest}`, body, ''].join('\n');
}

for (const v of vectors) {
  t.test(v.name, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-gate-vector-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const snapshotPath = join(dir, 'policy-snapshot.rules');
    if (v.snapshot !== null) writeFileSync(snapshotPath, snapshotFile(v.snapshot));
    if (v.gate.allowlist !== undefined) writeFileSync(join(dir, 'allow.json'), JSON.stringify(v.gate.allowlist));
    const gate = new Gate({ repoRoot: dir, workspaceId: v.gate.workspaceId, snapshotPath, allowlistPath: 'allow.json', env: v.env ?? {} });
    let code: string | null = null;
    try {
      await gate.guard(v.tool, v.input);
    } catch (err) {
      if (!(err instanceof SvcGateRefusal)) throw err;
      code = err.code;
      t.match(err.message, code === 'HELD' ? /^\[Svc Governance\] HELD: / : /^\[Svc Governance\] BLOCKED: /, 'the refusal text starts with its prefix');
    }
    t.equal(code, v.expected);
  });
}
