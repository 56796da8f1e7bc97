const SEPARATORS = new Set([' ', '-', '.', '/']);

/**
 * Where a candidate of separated digit groups may end, longest first: the whole text, then just
 * before each separator. Candidate patterns are greedy, so `4111 1111 1111 1111 123` or
 * `+44 20 7946 0958 2024` carry a trailing group the validator may have to drop.
 */
export function groupCuts(text: string): number[] {
  const cuts = [text.length];
  for (let i = text.length - 1; i > 0; i--) {
    if (SEPARATORS.has(text[i]!) && !SEPARATORS.has(text[i - 1]!)) cuts.push(i);
  }
  return cuts;
}
