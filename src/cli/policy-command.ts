import { readFile, mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { describeZodError } from '../config/zod-error.js';
import { ConfigError } from '../lib/errors.js';
import { ruleContextSchema } from '../policy/wasm/abi.js';
import { compileRule } from '../policy/wasm/compile.js';
import { admitRule, evaluateModule, RuleModuleError } from '../policy/wasm/module-check.js';
import { CONTROL_PLANE_PREFIX, DEFAULT_PRIORITY, readRuleFiles, RULE_NAME, ruleFileName, sha256, wasmDir } from '../policy/wasm/rule-files.js';
import type { RuleDecision } from '../policy/wasm/runner.js';

/** Exit codes of `svc policy test`: the verdict, so scripts can branch on it. */
export const TEST_EXIT = { allow: 0, block: 1, hold: 3 } as const;

function parseFlags<T extends z.ZodType>(schema: T, flags: unknown): z.infer<T> {
  const parsed = schema.safeParse(flags);
  if (!parsed.success) throw new ConfigError(`invalid option: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

async function readBytes(path: string, what: string): Promise<Uint8Array<ArrayBuffer>> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (err) {
    throw new ConfigError(`cannot read ${what} ${path}: ${(err as Error).message}`);
  }
}

const compileFlags = z.strictObject({
  src: z.string().min(1).default('assembly/index.ts'),
  out: z.string().min(1).default('build/rule.wasm'),
  debug: z.boolean().default(false),
});

async function compile(flags: unknown): Promise<void> {
  const opts = parseFlags(compileFlags, flags);
  try {
    await compileRule(opts);
  } catch (err) {
    throw new ConfigError(`compiling ${opts.src} failed:\n${(err as Error).message}`);
  }
  const bytes = await readFile(opts.out);
  process.stdout.write(`compiled ${opts.src} to ${opts.out} (${bytes.length} bytes, sha256 ${sha256(bytes).slice(0, 12)})\n`);
}

const testFlags = z.strictObject({ wasm: z.string().min(1), mock: z.string().min(1) });

async function test(flags: unknown): Promise<void> {
  const opts = parseFlags(testFlags, flags);
  let mock: unknown;
  try {
    mock = JSON.parse(await readFile(opts.mock, 'utf8'));
  } catch (err) {
    throw new ConfigError(`cannot read the mock context ${opts.mock}: ${(err as Error).message}`);
  }
  const context = ruleContextSchema.safeParse(mock);
  if (!context.success) throw new ConfigError(`invalid mock context ${opts.mock}: ${describeZodError(context.error)}`);
  let decision: RuleDecision;
  try {
    decision = await evaluateModule(await readBytes(opts.wasm, 'rule'), basename(opts.wasm), context.data);
  } catch (err) {
    if (err instanceof RuleModuleError) throw new ConfigError(err.message);
    throw err;
  }
  for (const f of decision.failures) process.stderr.write(`rule failed: ${f.error}\n`);
  process.stdout.write(decision.action === 'allow' ? 'allow\n' : `${decision.action}: ${decision.reason}\n`);
  process.exitCode = TEST_EXIT[decision.action];
}

const installFlags = z.strictObject({
  wasm: z.string().min(1),
  name: z.string().regex(RULE_NAME, 'a name is letters, digits, dot, dash or underscore (up to 128), starting with a letter or digit').optional(),
  priority: z.coerce.number().int().min(0).max(999_999).default(DEFAULT_PRIORITY),
});

async function install(flags: unknown): Promise<void> {
  const opts = parseFlags(installFlags, flags);
  const name = opts.name ?? basename(opts.wasm).replace(/\.wasm$/, '').replace(/[^A-Za-z0-9._-]/g, '_');
  if (!RULE_NAME.test(name)) throw new ConfigError(`cannot derive a rule name from ${opts.wasm}; pass --name`);
  if (name.startsWith(CONTROL_PLANE_PREFIX)) throw new ConfigError(`not installed: names starting with ${CONTROL_PLANE_PREFIX} are kept for rules from the control plane; pass another --name`);
  const bytes = await readBytes(opts.wasm, 'rule');
  try {
    await admitRule(bytes, name);
  } catch (err) {
    throw new ConfigError(`not installed: ${(err as Error).message}`);
  }
  const dir = wasmDir();
  await mkdir(dir, { recursive: true });
  const file = ruleFileName(opts.priority, name);
  const temp = join(dir, `.${file}.${process.pid}.tmp`);
  await writeFile(temp, bytes);
  await rename(temp, join(dir, file));
  // Reinstalling a rule under a new priority replaces it.
  for (const old of await readRuleFiles(dir)) if (old.name === name && old.file !== file) await unlink(old.path).catch(() => undefined);
  process.stdout.write(`installed ${file} (sha256 ${sha256(bytes).slice(0, 12)}) in ${dir}; a running proxy picks it up within 5 seconds\n`);
}

async function listLocal(): Promise<void> {
  const dir = wasmDir();
  const rules = await readRuleFiles(dir);
  if (rules.length === 0) {
    process.stdout.write(`no rules installed in ${dir}\n`);
    return;
  }
  const rows = [['PRIORITY', 'NAME', 'SIZE', 'MTIME', 'SHA256']];
  for (const r of rules) rows.push([String(r.priority), r.name, String(r.size), r.mtime.toISOString(), r.sha256.slice(0, 12)]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  for (const row of rows) process.stdout.write(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd() + '\n');
}

/** `svc policy …`: compile, test, install and list WASM rules (seed 002). */
export function registerPolicyCommands(program: Command, fail: (err: unknown) => never): void {
  const policy = program.command('policy').description('WASM policy rules: compile, test, install, list');
  policy
    .command('compile')
    .description('compile an AssemblyScript rule to WebAssembly')
    .option('--src <file>', 'rule source (default assembly/index.ts)')
    .option('--out <file>', 'output module (default build/rule.wasm)')
    .option('--debug', 'debug build: no optimisation, assertions and source map kept')
    .action((opts: Record<string, unknown>) => compile(opts).catch(fail));
  policy
    .command('test')
    .description('evaluate a rule against a JSON call context; exit 0 allow, 1 block, 3 hold')
    .requiredOption('--wasm <file>', 'the rule module')
    .requiredOption('--mock <file>', 'the call context, as JSON')
    .action((opts: Record<string, unknown>) => test(opts).catch(fail));
  policy
    .command('install')
    .description('install a rule into SVC_WASM_DIR (default ~/.svc/wasm) as {priority}_{name}.wasm')
    .requiredOption('--wasm <file>', 'the rule module')
    .option('--name <name>', 'rule name (default: the file name)')
    .option('--priority <n>', 'lower runs first (default 100)')
    .action((opts: Record<string, unknown>) => install(opts).catch(fail));
  policy
    .command('list-local')
    .description('list installed rules: priority, name, size, mtime, SHA-256 prefix')
    .action(() => listLocal().catch(fail));
}
