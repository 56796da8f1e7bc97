import { round2, type AnomalyFinding } from './finding.js';

/** Turns in a row with growing DLP findings before it counts as escalation. */
const MIN_TURNS = 3;

/**
 * `dlp_escalation`: DLP findings growing across the session's turns. Counting per turn (an
 * assistant step and the tool results and messages that follow it), the turns up to the latest
 * one each have findings, never fewer than the turn before, and the latest has more than the
 * first of them.
 */
export function detectDlpEscalation(findingMessages: readonly number[], turnOfMessage: readonly number[]): AnomalyFinding | null {
  if (findingMessages.length === 0 || turnOfMessage.length === 0) return null;
  const lastTurn = turnOfMessage.at(-1)!;
  const perTurn = new Array<number>(lastTurn + 1).fill(0);
  for (const m of findingMessages) {
    const turn = turnOfMessage[m];
    if (turn !== undefined) perTurn[turn]!++;
  }
  let start = lastTurn;
  while (start > 0 && perTurn[start - 1]! > 0 && perTurn[start - 1]! <= perTurn[start]!) start--;
  const streak = lastTurn - start + 1;
  if (perTurn[lastTurn] === 0 || streak < MIN_TURNS || perTurn[lastTurn]! <= perTurn[start]!) return null;
  return {
    detector: 'dlp_escalation',
    confidence: round2(0.8 + 0.05 * (streak - MIN_TURNS)),
    repeats: streak,
    tools: [],
    summary: `sensitive data found in ${streak} turns in a row, growing from ${perTurn[start]} to ${perTurn[lastTurn]} findings`,
  };
}
