import { createHash } from 'node:crypto';

export interface CachedAnswers {
  readonly pYes: Readonly<Record<string, number>>;
  readonly model: string;
}

export function subjectHash(subject: string): string {
  return createHash('sha256').update(subject).digest('hex');
}

/**
 * A rule's answers about one subject, kept per (rule hash, subject hash) for a short TTL so an
 * agent retrying the same call does not pay the model again. Bounded by entry count; the oldest
 * insertion goes first.
 */
export class AnswerCache {
  private readonly entries = new Map<string, { answers: CachedAnswers; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get(ruleHash: string, subject: string, now: number): CachedAnswers | undefined {
    if (!this.enabled) return undefined;
    const key = `${ruleHash}:${subjectHash(subject)}`;
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.answers;
  }

  set(ruleHash: string, subject: string, answers: CachedAnswers, now: number): void {
    if (!this.enabled) return;
    const key = `${ruleHash}:${subjectHash(subject)}`;
    this.entries.delete(key);
    this.entries.set(key, { answers, expiresAt: now + this.ttlMs });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}
