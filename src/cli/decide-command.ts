import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { describeZodError } from '../config/zod-error.js';
import { readEngineConfig } from '../decide/engine-config.js';
import { runEval, type EvalCase } from '../decide/eval.js';
import { DecideEngine, MAX_ENFORCING_RULES_PER_TOOL, toolCallSubject } from '../decide/evaluate.js';
import { readPins, writePin } from '../decide/pins.js';
import { loadRules, type LoadedRules } from '../decide/sop-loader.js';
import { decisionJson, subjectText } from '../decide/traffic.js';
import { namesIn } from '../decide/when.js';
import { ConfigError } from '../lib/errors.js';
import { createLogger } from '../lib/logger.js';

export interface LintProblem {
  readonly file: string;
  readonly line: number;
  readonly severity: 'error' | 'warning';
  readonly message: string;
}

function splitSource(source: string): { file: string; line: number } {
  const m = /^(.*):(\d+)$/.exec(source);
  return m === null ? { file: source, line: 0 } : { file: m[1]!, line: Number(m[2]) };
}

/** Every problem of the loaded rules, with file and line: unreadable lines, crowded tools, unused questions. */
export function lintRules(loaded: LoadedRules): LintProblem[] {
  const problems: LintProblem[] = [];
  for (const u of loaded.unreadable) {
    for (const message of u.problems) problems.push({ file: u.file, line: u.line, severity: 'error', message: `${message} (the line's fallback refuses ${u.tools === null ? 'every tool' : u.tools.join(', ')})` });
  }
  const enforcingByTool = new Map<string, string[]>();
  for (const rule of loaded.rules) {
    const at = splitSource(rule.source);
    const used = namesIn(rule.when);
    for (const name of Object.keys(rule.record.questions)) {
      if (!used.has(name)) problems.push({ ...at, severity: 'warning', message: `question '${name}' is asked but not used in when` });
    }
    if (rule.record.context?.includes('last_user_turn')) {
      problems.push({ ...at, severity: 'warning', message: 'context last_user_turn is reserved: it is hashed with the rule but never supplied' });
    }
    if (rule.record.rollout === 'enforce' && rule.record.on === 'tool_call') {
      for (const tool of rule.record.tools) enforcingByTool.set(tool, [...(enforcingByTool.get(tool) ?? []), rule.source]);
    }
  }
  for (const [tool, sources] of enforcingByTool) {
    if (sources.length <= MAX_ENFORCING_RULES_PER_TOOL) continue;
    for (const source of sources) {
      problems.push({ ...splitSource(source), severity: 'error', message: `${sources.length} enforcing rules name the tool ${tool}; at most ${MAX_ENFORCING_RULES_PER_TOOL} may (the tool's rules would be unavailable)` });
    }
  }
  return problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

const caseSchema = z.strictObject({
  subject: z.union([z.string().min(1), z.strictObject({ tool: z.string().min(1), arguments: z.union([z.string(), z.record(z.string(), z.unknown())]) })]),
  expect: z.enum(['refuse', 'allow', 'escalate']),
});

/** Labelled cases, one JSON object a line; every bad line is reported with its number. */
export function parseCases(text: string, file: string): EvalCase[] {
  const cases: EvalCase[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim().length === 0) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      problems.push(`${file}:${i + 1}: not JSON`);
      return;
    }
    const parsed = caseSchema.safeParse(value);
    if (!parsed.success) problems.push(`${file}:${i + 1}: ${describeZodError(parsed.error)}`);
    else cases.push({ subject: subjectText(parsed.data.subject), expect: parsed.data.expect });
  });
  if (problems.length > 0) throw new ConfigError(`bad cases:\n${problems.join('\n')}`);
  if (cases.length === 0) throw new ConfigError(`${file} holds no cases`);
  return cases;
}

const minAccuracySchema = z.coerce.number().min(0).max(1);

async function openEngine(root: string, env: NodeJS.ProcessEnv): Promise<{ engine: DecideEngine; loaded: LoadedRules }> {
  const [config, loaded, pins] = await Promise.all([readEngineConfig(env), loadRules(root), readPins(env)]);
  const engine = new DecideEngine({ config, rules: loaded.rules, pins, logger: createLogger('error') });
  await engine.start();
  return { engine, loaded };
}

function ruleOf(engine: DecideEngine, id: string) {
  const active = engine.find(id);
  if (active === undefined) throw new ConfigError(`no decide rule '${id}' under .svc/sops (run svc decide lint)`);
  return active;
}

const out = (text: string) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);

export function registerDecide(program: Command, fail: (err: unknown) => never): void {
  const decide = program.command('decide').description('check, try and evaluate decide rules (.svc/sops/<name>/*.md)');
  const rootOption = ['--root <dir>', 'folder holding .svc/sops (default: the current folder)'] as const;

  decide
    .command('lint')
    .description('parse and check every decide rule; every problem with file and line')
    .option(...rootOption)
    .option('--json', 'print the problems as JSON')
    .action(async (opts: { root?: string; json?: boolean }) => {
      try {
        const loaded = await loadRules(resolve(opts.root ?? '.'));
        const problems = lintRules(loaded);
        if (opts.json) out(JSON.stringify({ rules: loaded.rules.length, problems }, null, 2));
        else {
          for (const p of problems) out(`${p.file}:${p.line}: ${p.severity}: ${p.message}`);
          out(`${loaded.rules.length} rule(s), ${problems.filter((p) => p.severity === 'error').length} error(s), ${problems.filter((p) => p.severity === 'warning').length} warning(s)`);
        }
        process.exitCode = problems.some((p) => p.severity === 'error') ? 1 : 0;
      } catch (err) {
        fail(err);
      }
    });

  decide
    .command('test <rule>')
    .description('ask one rule about one subject (without context: last_user_turn)')
    .option(...rootOption)
    .option('--subject <text>', 'the subject: a response text')
    .option('--tool <name>', 'the subject is a call to this tool…')
    .option('--args <json>', '…with these arguments', '{}')
    .action(async (id: string, opts: { root?: string; subject?: string; tool?: string; args: string }) => {
      let engine: DecideEngine | undefined;
      try {
        if ((opts.subject === undefined) === (opts.tool === undefined)) throw new ConfigError('give --subject, or --tool with --args');
        ({ engine } = await openEngine(resolve(opts.root ?? '.'), process.env));
        const subject = opts.subject ?? toolCallSubject(opts.tool!, opts.args);
        const decision = await engine.evaluate(ruleOf(engine, id), subject, { canAskPerson: false, fresh: true });
        out(JSON.stringify(decisionJson(decision, 'cli', []), null, 2));
        process.exitCode = decision.outcome === 'unavailable' ? 1 : 0;
      } catch (err) {
        fail(err);
      } finally {
        await engine?.close();
      }
    });

  decide
    .command('eval <rule>')
    .description('run a rule over a labelled JSONL set ({"subject", "expect"} a line); pin the model when it passes')
    .option(...rootOption)
    .requiredOption('--cases <file>', 'labelled cases, JSON lines')
    .option('--min-accuracy <n>', 'accuracy needed to pass, 0–1', '0.9')
    .option('--no-pin', 'report only; do not pin the model')
    .action(async (id: string, opts: { root?: string; cases: string; minAccuracy: string; pin: boolean }) => {
      let engine: DecideEngine | undefined;
      try {
        const min = minAccuracySchema.safeParse(opts.minAccuracy);
        if (!min.success) throw new ConfigError('--min-accuracy is a number from 0 to 1');
        const cases = parseCases(await readFile(opts.cases, 'utf8'), opts.cases);
        ({ engine } = await openEngine(resolve(opts.root ?? '.'), process.env));
        const result = await runEval(engine, ruleOf(engine, id), cases, min.data);
        for (const c of result.cases) if (!c.correct) out(`case ${c.index + 1}: expected ${c.expect}, got ${c.outcome}`);
        out(`${id}: accuracy ${(result.accuracy * 100).toFixed(1)}% over ${cases.length} case(s), p95 ${Math.round(result.p95Ms)} ms, model ${result.model ?? '(none)'}`);
        if (!result.passed) {
          out(`not passed: ${result.failure}`);
          process.exitCode = 1;
          return;
        }
        if (opts.pin && result.model !== null) {
          await writePin(process.env, id, { ruleHash: result.ruleHash, model: result.model, accuracy: result.accuracy, p95Ms: result.p95Ms, cases: cases.length, pinnedAt: new Date().toISOString() });
          out(`passed: pinned ${result.model} for ${id}`);
        } else out('passed');
        process.exitCode = 0;
      } catch (err) {
        fail(err);
      } finally {
        await engine?.close();
      }
    });
}
