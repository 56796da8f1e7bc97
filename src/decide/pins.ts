import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../lib/errors.js';
import { svcHome } from '../lib/paths.js';
import type { DecideRule } from './record.js';

/** What a passing eval records for a rule: the model it passed on, against this exact record. */
export const pinSchema = z.strictObject({
  ruleHash: z.string().regex(/^[0-9a-f]{64}$/),
  model: z.string().min(1).max(256),
  accuracy: z.number().min(0).max(1),
  p95Ms: z.number().min(0),
  cases: z.number().int().min(1),
  pinnedAt: z.string(),
});
const pinsFileSchema = z.record(z.string(), pinSchema);

export type Pin = z.infer<typeof pinSchema>;
export type Pins = Readonly<Record<string, Pin>>;

export function pinsPath(env: NodeJS.ProcessEnv): string {
  return join(svcHome(env), 'decide', 'pins.json');
}

export async function readPins(env: NodeJS.ProcessEnv): Promise<Pins> {
  const path = pinsPath(env);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(`cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError(`${path} is not valid JSON`);
  }
  const parsed = pinsFileSchema.safeParse(json);
  if (!parsed.success) throw new ConfigError(`${path} is not a pins file: ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

/** Records a pin, replacing the rule's previous one; written to a temporary file and renamed. */
export async function writePin(env: NodeJS.ProcessEnv, ruleId: string, pin: Pin): Promise<void> {
  const path = pinsPath(env);
  const pins = { ...(await readPins(env)), [ruleId]: pin };
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(pins, null, 2) + '\n', { mode: 0o600 });
  await rename(tmp, path);
}

export type Stamp = 'enforce' | 'shadow';

/**
 * `enforce` is a ceiling: a rule enforces only when its rollout says so and a passing eval pinned
 * the model the engine runs, against this exact record. Otherwise it runs as shadow.
 */
export function stampFor(rule: DecideRule, pins: Pins, engineModel: string | null): Stamp {
  if (rule.record.rollout !== 'enforce' || engineModel === null) return 'shadow';
  const pin = pins[rule.record.id];
  return pin !== undefined && pin.ruleHash === rule.hash && pin.model === engineModel ? 'enforce' : 'shadow';
}
