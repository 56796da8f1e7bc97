import { wasmRulesSchema } from '../../config/proxy-config.js';
import { createLogger } from '../../lib/logger.js';
import { ALLOW_CONTEXT, KIND_BITS, type RuleContext } from './abi.js';
import { DEFAULT_PRIORITY, sha256 } from './rule-files.js';
import { WasmRuleRunner, type RuleDecision } from './runner.js';
import { buildSnapshot } from './snapshot.js';

const RULE_DEFAULTS = wasmRulesSchema.parse({});
const PAGE_BYTES = 65536;

/** A module that is not a usable rule, with the reason. */
export class RuleModuleError extends Error {}

/**
 * Runs one module as the proxy would, with the default fuel and memory cap: first metered,
 * instantiated and checked (ABI version, exports, memory), then evaluated, unless it declares it
 * does not evaluate this kind of call (which the proxy would then not ask it).
 */
export async function evaluateModule(bytes: Uint8Array<ArrayBuffer>, name: string, context: RuleContext): Promise<RuleDecision> {
  if (!WebAssembly.validate(bytes)) throw new RuleModuleError(`${name} is not a valid WebAssembly module`);
  const set = buildSnapshot([{ name, priority: DEFAULT_PRIORITY, sha256: sha256(bytes), bytes }]);
  const runner = new WasmRuleRunner({
    fuel: RULE_DEFAULTS.fuel,
    memoryCapPages: (RULE_DEFAULTS.memoryMaxMb * 1024 * 1024) / PAGE_BYTES,
    failurePolicy: 'closed',
    logger: createLogger('silent'),
  });
  try {
    const [check] = await runner.check(set);
    if (check === undefined || 'error' in check) throw new RuleModuleError(`${name} cannot be loaded: ${check?.error ?? 'no result'}`);
    if ((check.kinds & KIND_BITS[context.kind]) === 0) return { action: 'allow', rule: null, reason: '', failures: [] };
    return await runner.evaluate(set, context);
  } finally {
    await runner.close();
  }
}

/** What a rule must pass to be installed anywhere: it loads, and it allows a plain file read. */
export async function admitRule(bytes: Uint8Array<ArrayBuffer>, name: string): Promise<void> {
  const decision = await evaluateModule(bytes, name, ALLOW_CONTEXT);
  if (decision.failures.length > 0) throw new RuleModuleError(`${name} failed on the allow context: ${decision.failures[0]!.error}`);
  if (decision.action !== 'allow') {
    throw new RuleModuleError(`${name} answers ${decision.action} (${decision.reason}) to a plain file read; a rule must allow the allow context`);
  }
}
