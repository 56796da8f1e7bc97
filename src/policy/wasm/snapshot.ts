/**
 * A rule set: every module's bytes in one buffer and the rules in priority order. Immutable; a
 * change makes a new one.
 */
export interface RuleSetSnapshot {
  /** Changes whenever any rule is added, replaced or removed. */
  readonly version: string;
  /**
   * The loaded generation this set is a part of (the sets for each kind of call are parts of one),
   * and the hashes of all its modules: what a runner keeps instantiated.
   */
  readonly generation: string;
  readonly live: readonly string[];
  readonly blob: SharedArrayBuffer;
  readonly rules: readonly RuleRef[];
}

export interface RuleRef {
  readonly name: string;
  readonly priority: number;
  readonly sha256: string;
  readonly offset: number;
  readonly length: number;
}

export interface RuleBytes {
  readonly name: string;
  readonly priority: number;
  readonly sha256: string;
  readonly bytes: Uint8Array;
}

export function buildSnapshot(rules: readonly RuleBytes[], whole?: Pick<RuleSetSnapshot, 'generation' | 'live'>): RuleSetSnapshot {
  const ordered = [...rules].sort((a, b) => a.priority - b.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const total = ordered.reduce((n, r) => n + r.bytes.length, 0);
  const blob = new SharedArrayBuffer(total);
  const view = new Uint8Array(blob);
  const refs: RuleRef[] = [];
  let offset = 0;
  for (const r of ordered) {
    view.set(r.bytes, offset);
    refs.push({ name: r.name, priority: r.priority, sha256: r.sha256, offset, length: r.bytes.length });
    offset += r.bytes.length;
  }
  const version = ordered.map((r) => `${r.priority}_${r.name}@${r.sha256.slice(0, 16)}`).join(',');
  const generation = whole ?? { generation: version, live: refs.map((r) => r.sha256) };
  return Object.freeze({ version, ...generation, blob, rules: Object.freeze(refs) });
}
