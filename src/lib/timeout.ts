/**
 * `promise`, or the error `timedOut(ms)` makes once `ms` have passed. The loser's rejection is
 * handled by the race, and the timer is cleared either way.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, timedOut: (ms: number) => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut(ms)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
