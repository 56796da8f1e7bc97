import { createHash } from 'node:crypto';
import type { Logger } from '../lib/logger.js';
import { readEngineConfig, type EngineConfig } from './engine-config.js';
import { DecideEngine } from './evaluate.js';
import { legacyFromEnv, type FreeTextJudge } from './legacy-judge.js';
import { readPins, type Pins } from './pins.js';
import { ResponseJudge, type ResponseContext, type ResponseNote } from './response-judge.js';
import { loadRules, type LoadedRules } from './sop-loader.js';
import { DecideToolJudge } from './tool-judge.js';

export interface DecideRuntimeOptions {
  readonly engine: EngineConfig;
  readonly loaded: LoadedRules;
  readonly pins: Pins;
  readonly env: NodeJS.ProcessEnv;
  readonly logger: Logger;
}

/**
 * Everything decide rules need at the gateway, built once at start: the engine for the SOP rules,
 * the legacy local judge when its variables are set, and the judges the response path asks.
 */
export class DecideRuntime {
  readonly engine: DecideEngine;
  /** The judge of tool calls in responses, for the relay's tool-call holding. */
  readonly tools: DecideToolJudge;
  /**
   * Identifies what this runtime would judge differently: its rules, unreadable lines, model and
   * pins. Part of the exact cache key, so an answer judged under other rules is not replayed.
   */
  readonly fingerprint: string;
  private readonly legacyEngine: DecideEngine | null;
  private readonly freeText: FreeTextJudge | null;
  private readonly responseJudges: ResponseJudge[];
  private readonly freeTextDecides: boolean;

  constructor(options: DecideRuntimeOptions) {
    const { logger } = options;
    for (const u of options.loaded.unreadable) logger.error({ file: u.file, line: u.line, problems: u.problems }, 'decide: line does not read; its tools are refused until it is fixed');
    this.engine = new DecideEngine({ config: options.engine, rules: options.loaded.rules, pins: options.pins, logger });
    const legacy = legacyFromEnv(options.env, options.loaded.sopTexts, logger);
    this.legacyEngine =
      legacy?.typed != null ? new DecideEngine({ config: legacy.engine, rules: [], pins: {}, logger, legacy: { rule: legacy.typed.rule, scoring: legacy.typed.scoring } }) : null;
    this.freeText = legacy?.freeText ?? null;
    this.freeTextDecides = legacy !== null && legacy.typed === null && this.freeText !== null;
    this.fingerprint = createHash('sha256')
      .update(
        JSON.stringify([
          options.loaded.rules.map((r) => r.hash).sort(),
          options.loaded.unreadable.map((u) => `${u.file}:${u.line}`),
          options.engine.model,
          options.pins,
          legacy !== null,
        ]),
      )
      .digest('hex')
      .slice(0, 16);
    this.tools = new DecideToolJudge(this.engine, { logger, unreadable: options.loaded.unreadable });
    this.responseJudges = [new ResponseJudge(this.engine, { logger })];
    if (this.legacyEngine !== null) {
      const freeText = this.freeText;
      this.responseJudges.push(
        new ResponseJudge(this.legacyEngine, { logger, violationNote: freeText === null ? undefined : (_d, text) => freeText.violationSentence(text) }),
      );
    }
  }

  /** Reads the engine config, SOP rules, pins and legacy variables. */
  static async load(opts: { env: NodeJS.ProcessEnv; root: string; configRecords: readonly unknown[]; logger: Logger }): Promise<DecideRuntime> {
    const [engine, loaded, pins] = await Promise.all([readEngineConfig(opts.env), loadRules(opts.root, opts.configRecords), readPins(opts.env)]);
    return new DecideRuntime({ engine, loaded, pins, env: opts.env, logger: opts.logger });
  }

  /**
   * Loads and starts decide runtimes for the proxy: the SOPs of `root` plus a config's own decide
   * rule records (a config with other records gets a new runtime).
   */
  static loader(opts: { env: NodeJS.ProcessEnv; root: string; logger: Logger }): (configRecords: readonly unknown[]) => Promise<DecideRuntime> {
    return async (configRecords) => {
      const runtime = await DecideRuntime.load({ ...opts, configRecords });
      void runtime.start();
      return runtime;
    };
  }

  /** Whether complete responses need judging at all. */
  get judgesResponses(): boolean {
    return this.freeTextDecides || this.responseJudges.some((j) => j.active);
  }

  /** The note to write into a response, the first VIOLATION before any AMBIGUOUS; null when cleared. */
  async noteFor(responseText: string, ctx: ResponseContext): Promise<ResponseNote | null> {
    const notes = await Promise.all([
      ...this.responseJudges.map((j) => j.judge(responseText, ctx)),
      this.freeTextDecides && responseText.trim().length > 0 ? this.freeText!.judge(responseText) : Promise.resolve(null),
    ]);
    return notes.find((n) => n?.verdict === 'VIOLATION') ?? notes.find((n) => n !== null) ?? null;
  }

  start(): Promise<void> {
    return Promise.all([this.engine.start(), this.legacyEngine?.start()]).then(() => undefined);
  }

  async close(): Promise<void> {
    await Promise.all([this.engine.close(), this.legacyEngine?.close(), this.freeText?.close()]);
  }
}
