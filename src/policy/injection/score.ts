import type { Segment } from './normalise.js';
import { segmentSignals, type Signal } from './signals.js';

/**
 * Weighs signals into a confidence. Each signal adds evidence; an instruction addressed to the
 * model that carries an action, a secret that is also sent somewhere, or a concealed action adds
 * more than its parts. Confidence is 1 − e^(−evidence): 1.2 units ≈ 0.7.
 */
const WEIGHT: Readonly<Record<Signal, number>> = {
  override: 2.2,
  override_quoted: 0.5,
  role_reset: 1.2,
  addressed: 0.5,
  addressing: 0.7,
  conceal: 1.1,
  run: 0.15,
  risky_command: 0.35,
  send: 0.5,
  read_secret: 0.5,
  secret: 0.2,
  data_url: 0.8,
  image_exfil: 1.3,
  repo_write: 0.1,
  private_scope: 0.15,
  coercion: 0.5,
  framing: 0.25,
};

const ACTIONS: readonly Signal[] = ['run', 'risky_command', 'send', 'read_secret', 'data_url', 'image_exfil', 'repo_write', 'conceal'];
const RISKY: readonly Signal[] = ['risky_command', 'send', 'read_secret', 'data_url', 'image_exfil', 'conceal'];

/** Evidence beyond the sum of the parts, for signals that mean more together. */
function interactions(s: ReadonlySet<Signal>): number {
  const has = (x: Signal) => s.has(x);
  const any = (xs: readonly Signal[]) => xs.some(has);
  let extra = 0;
  const toModel = has('addressed') || has('addressing') || has('role_reset');
  if (toModel && any(RISKY)) extra += 1.0;
  else if (toModel && any(ACTIONS)) extra += 0.35;
  if ((has('read_secret') || has('secret')) && (has('send') || has('data_url'))) extra += 0.8;
  if (has('conceal') && any(ACTIONS.filter((a) => a !== 'conceal'))) extra += 0.5;
  if (has('framing') && any(RISKY)) extra += 0.35;
  if (has('coercion') && any(ACTIONS)) extra += 0.7;
  if (has('repo_write') && (has('private_scope') || has('secret'))) extra += 0.6;
  if (has('risky_command') && has('send')) extra += 0.3;
  return extra;
}

function evidence(s: ReadonlySet<Signal>): number {
  let e = 0;
  for (const x of s) e += WEIGHT[x];
  return e + interactions(s);
}

export interface Scored {
  readonly evidence: number;
  readonly signals: ReadonlySet<Signal>;
}

/** Signals a tool's own description may carry without suspicion: it is written to instruct the model. */
const DESCRIPTION_EXPECTED: ReadonlySet<Signal> = new Set(['addressed', 'addressing', 'conceal', 'run', 'framing', 'repo_write', 'secret', 'read_secret', 'risky_command']);

/** Sentences weighed together: an addressee, its action and a "do not tell" may sit apart. */
const WINDOW = 3;

/**
 * The strongest evidence in a segment: signals are read per sentence and weighed over each run
 * of WINDOW neighbouring sentences.
 */
export function scoreSegment(segment: Segment, forDescription: boolean, floor = 0): Scored {
  const signals = segmentSignals(segment.text, forDescription ? DESCRIPTION_EXPECTED : undefined);
  const possible = new Set(signals.possible);
  if (forDescription) for (const x of DESCRIPTION_EXPECTED) possible.delete(x);
  if (possible.size === 0 || evidence(possible) < floor) return { evidence: 0, signals: new Set() };
  const perSentence = signals.read().map((found) => {
    if (forDescription) for (const x of DESCRIPTION_EXPECTED) found.delete(x);
    return found;
  });
  let best: Scored = { evidence: 0, signals: new Set() };
  for (let i = 0; i < perSentence.length; i++) {
    const window = new Set(perSentence.slice(i, i + WINDOW).flatMap((found) => [...found]));
    if (window.size === 0) continue;
    const e = evidence(window);
    if (e > best.evidence) best = { evidence: e, signals: window };
  }
  return best;
}
