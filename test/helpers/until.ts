/**
 * Polls `probe` until it yields a value (anything but undefined) and returns it; throws naming
 * `what` after `timeoutMs`. The bound is generous: it is a functional wait, not a timing assertion.
 */
export async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
