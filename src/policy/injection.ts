import { readFileSync } from 'node:fs';
import RE2 from 're2';
import { z } from 'zod';

const rulesSchema = z.object({ patterns: z.array(z.object({ id: z.string().min(1), pattern: z.string().min(1) })).min(1) });

interface CompiledPattern {
  readonly id: string;
  readonly re: RE2;
}

export interface InjectionHit {
  readonly id: string;
}

const BUILT_IN = rulesSchema.parse(JSON.parse(readFileSync(new URL('../../rules/injection.json', import.meta.url), 'utf8'))).patterns;

/**
 * Prompt-injection patterns: the built-in set in rules/injection.json plus a workspace's own
 * (`mcpInjectionPatterns`). A workspace pattern RE2 cannot compile is dropped and reported in
 * `dropped`, so the caller can log it once.
 */
export class InjectionScanner {
  private readonly patterns: CompiledPattern[];
  readonly dropped: ReadonlyArray<{ pattern: string; reason: string }>;

  constructor(extraPatterns: readonly string[] = []) {
    const dropped: Array<{ pattern: string; reason: string }> = [];
    this.patterns = BUILT_IN.map((p) => ({ id: p.id, re: new RE2(p.pattern, 'u') }));
    extraPatterns.forEach((pattern, i) => {
      try {
        this.patterns.push({ id: `injection.workspace.${i}`, re: new RE2(pattern, 'u') });
      } catch (err) {
        dropped.push({ pattern, reason: (err as Error).message });
      }
    });
    this.dropped = dropped;
  }

  /** The first pattern that matches, or null. */
  scan(text: string): InjectionHit | null {
    for (const p of this.patterns) if (p.re.test(text)) return { id: p.id };
    return null;
  }
}
