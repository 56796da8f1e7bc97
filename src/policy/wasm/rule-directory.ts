import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '../../lib/logger.js';
import { KIND_BITS, RULE_KINDS, type RuleKind } from './abi.js';
import type { RuleCheck } from './evaluator.js';
import { readRuleFiles, type RuleFile } from './rule-files.js';
import { buildSnapshot, type RuleSetSnapshot } from './snapshot.js';

export interface LoadedRule {
  readonly name: string;
  readonly priority: number;
  readonly sha256: string;
  /** The kinds of call it evaluates. */
  readonly kinds: readonly RuleKind[];
  /** The programs whose commands it judges (its `svc_programs`); null when it judges every tool call. */
  readonly programs: readonly string[] | null;
}

export interface FailedRule {
  readonly file: string;
  readonly error: string;
}

/** Meters and instantiates candidate rules: per rule, the kinds it evaluates or why it cannot load. */
export type RuleChecker = (set: RuleSetSnapshot) => Promise<RuleCheck[]>;

/** The loaded rules as one snapshot per kind of call (null where no rule evaluates that kind). */
type KindSets = Readonly<Record<RuleKind, RuleSetSnapshot | null>>;
const NO_SETS: KindSets = { request: null, tool_call: null, response: null };

export interface RuleDirectoryOptions {
  readonly dir: string;
  readonly check: RuleChecker;
  readonly logger: Logger;
  /** The periodic rescan that backs up the file watcher. */
  readonly rescanMs: number;
  /** Called whenever the set of loaded rules changes. */
  readonly onChange?: (set: RuleSetSnapshot | null) => void;
}

/** Debounce for bursts of watch events (a rename is several). */
const WATCH_SETTLE_MS = 50;

/**
 * The installed rules of one folder, kept current: a file watcher plus a periodic rescan. Every
 * scan builds a whole new snapshot and swaps it in, so an evaluation already running keeps the
 * rules it started with. A file that does not load is skipped (logged once per content) and the
 * others keep running.
 */
export class RuleDirectory {
  private snapshot: RuleSetSnapshot | null = null;
  private sets: KindSets = NO_SETS;
  private failures: FailedRule[] = [];
  /** The files of the last scan by path: those unchanged since are not read again. */
  private files = new Map<string, RuleFile>();
  /** Check outcome by module hash: unchanged files are not re-instantiated on every scan. */
  private readonly verdicts = new Map<string, RuleCheck>();
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private scanning: Promise<void> | null = null;
  private again = false;
  private closed = false;

  constructor(private readonly options: RuleDirectoryOptions) {}

  /** Identifies the loaded rules; changes with any rule added, replaced or removed ('' when none). */
  get generation(): string {
    return this.snapshot?.generation ?? '';
  }

  /** The rules in force that evaluate `kind`, in priority order, or null when none does. */
  forKind(kind: RuleKind): RuleSetSnapshot | null {
    return this.sets[kind];
  }

  get loaded(): LoadedRule[] {
    return (this.snapshot?.rules ?? []).map((r) => {
      const check = this.verdicts.get(r.sha256);
      return { name: r.name, priority: r.priority, sha256: r.sha256, kinds: kindsOf(check), programs: check !== undefined && 'programs' in check ? check.programs : null };
    });
  }

  get failed(): readonly FailedRule[] {
    return this.failures;
  }

  /** Loads what is installed now, then keeps watching. */
  async start(): Promise<void> {
    await this.rescan();
    this.timer = setInterval(() => void this.rescan(), this.options.rescanMs);
    this.timer.unref();
  }

  /** Scans now; concurrent calls coalesce into one more scan after the running one. */
  rescan(): Promise<void> {
    if (this.scanning !== null) {
      this.again = true;
      return this.scanning;
    }
    this.scanning = this.scanLoop().finally(() => (this.scanning = null));
    return this.scanning;
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    this.watcher = null;
    if (this.timer !== null) clearInterval(this.timer);
  }

  private async scanLoop(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.scan();
      } catch (err) {
        this.options.logger.error({ err, dir: this.options.dir }, 'WASM rule folder could not be scanned; the loaded rules stay in force');
      }
    } while (this.again && !this.closed);
  }

  private async scan(): Promise<void> {
    this.ensureWatcher();
    const files = await readRuleFiles(this.options.dir, this.files);
    this.files = new Map(files.map((f) => [f.path, f]));
    const present = new Set(files.map((f) => f.sha256));
    for (const sha of this.verdicts.keys()) if (!present.has(sha)) this.verdicts.delete(sha);
    await this.checkNew(files);
    if (this.closed) return;
    const good: RuleFile[] = [];
    const failures: FailedRule[] = [];
    for (const f of files) {
      const check = this.verdicts.get(f.sha256);
      if (check !== undefined && 'kinds' in check) good.push(f);
      else failures.push({ file: f.file, error: check?.error ?? 'not checked' });
    }
    for (const f of failures) {
      if (!this.failures.some((old) => old.file === f.file && old.error === f.error)) {
        this.options.logger.warn({ file: f.file, dir: this.options.dir, error: f.error }, `WASM rule ${f.file} skipped: ${f.error}`);
      }
    }
    this.failures = failures;
    const next = good.length === 0 ? null : buildSnapshot(good);
    if ((next?.version ?? '') === (this.snapshot?.version ?? '')) return;
    this.snapshot = next;
    this.sets = next === null ? NO_SETS : this.setsByKind(good, next);
    this.options.logger.info({ rules: good.map((f) => f.file), dir: this.options.dir }, 'WASM rules loaded');
    this.options.onChange?.(next);
  }

  /** Validates unseen modules: structure here, then metering (in the metering process) and a metered instantiation. */
  private async checkNew(files: readonly RuleFile[]): Promise<void> {
    const unseen = files.filter((f) => !this.verdicts.has(f.sha256));
    const candidates: RuleFile[] = [];
    for (const f of unseen) {
      if (WebAssembly.validate(f.bytes)) candidates.push(f);
      else this.verdicts.set(f.sha256, { error: 'not a valid WebAssembly module' });
    }
    if (candidates.length === 0) return;
    const set = buildSnapshot(candidates);
    const checks = await this.options.check(set);
    set.rules.forEach((ref, i) => this.verdicts.set(ref.sha256, checks[i] ?? { error: 'not checked' }));
  }

  private setsByKind(good: readonly RuleFile[], whole: RuleSetSnapshot): KindSets {
    const setFor = (kind: RuleKind) => {
      const rules = good.filter((f) => kindsOf(this.verdicts.get(f.sha256)).includes(kind));
      return rules.length === 0 ? null : buildSnapshot(rules, whole);
    };
    return { request: setFor('request'), tool_call: setFor('tool_call'), response: setFor('response') };
  }

  private ensureWatcher(): void {
    if (this.watcher !== null || this.closed) return;
    let settle: NodeJS.Timeout | null = null;
    try {
      this.watcher = watch(this.options.dir, () => {
        if (settle !== null) return;
        settle = setTimeout(() => {
          settle = null;
          void this.rescan();
        }, WATCH_SETTLE_MS);
      });
    } catch {
      // No folder yet: the periodic rescan looks again.
      return;
    }
    this.watcher.on('error', () => {
      this.watcher?.close();
      this.watcher = null;
    });
  }
}

function kindsOf(check: RuleCheck | undefined): RuleKind[] {
  return check !== undefined && 'kinds' in check ? RULE_KINDS.filter((k) => (check.kinds & KIND_BITS[k]) !== 0) : [];
}
