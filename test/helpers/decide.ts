import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDecideModel } from '../../bench/mock/decide-model.js';
import { buildEngineConfig, type EngineFile } from '../../src/decide/engine-config.js';
import { DecideEngine, type DecideEngineOptions } from '../../src/decide/evaluate.js';
import type { Pins } from '../../src/decide/pins.js';
import { compileRecord, type DecideRule } from '../../src/decide/record.js';
import { createLogger } from '../../src/lib/logger.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export type DecideModel = Awaited<ReturnType<typeof startDecideModel>>;

/** The mock model server, closed when the test ends. */
export async function startModel(t: Teardown): Promise<DecideModel> {
  const model = await startDecideModel();
  t.teardown(() => model.close());
  return model;
}

/** A temporary folder removed when the test ends. */
export async function tempDir(t: Teardown, prefix = 'svc-decide-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export async function writeSop(root: string, name: string, file: string, text: string): Promise<string> {
  const dir = join(root, '.svc', 'sops', name);
  await mkdir(dir, { recursive: true });
  const path = join(dir, file);
  await writeFile(path, text);
  return path;
}

export function rule(record: object): DecideRule {
  const result = compileRecord(record, 'test');
  if (!result.ok) throw new Error(result.problems.join('; '));
  return result.rule;
}

/** A pin that makes `r` enforce on `model`. */
export function pinFor(r: DecideRule, model: string, p95Ms = 10): Pins {
  return { [r.record.id]: { ruleHash: r.hash, model, accuracy: 1, p95Ms, cases: 10, pinnedAt: new Date(0).toISOString() } };
}

/** A tool_call rule several tests share: refuse a shell command that drops a table. */
export const DROP_TABLE_RECORD = {
  id: 'no-prod-drop',
  on: 'tool_call',
  tools: ['bash'],
  rollout: 'enforce',
  questions: { drops: { type: 'yes_no', ask: 'Does the command drop a table?' } },
  when: 'drops',
};

export const MODEL = 'judge-7b@sha256:0123456789abcdef';

/** An engine on the mock model, closed when the test ends. */
export function engineOn(
  t: Teardown,
  model: DecideModel,
  opts: { rules: DecideRule[]; pins?: Pins; file?: Partial<EngineFile>; legacy?: DecideEngineOptions['legacy'] },
): DecideEngine {
  const config = buildEngineConfig({ url: model.url, model: MODEL, ...opts.file }, {});
  const engine = new DecideEngine({ config, rules: opts.rules, pins: opts.pins ?? {}, logger: createLogger('silent'), legacy: opts.legacy });
  t.teardown(() => engine.close());
  return engine;
}
