/**
 * A value, or a promise of it when getting it had to wait. A hot path that can usually answer at
 * once (a tool call judged by rules on this thread) answers the value itself, so a caller that
 * needs nothing else pays no promise and no turn of the microtask queue.
 */
export type MaybePromise<T> = T | Promise<T>;

export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return value instanceof Promise;
}

/** `next` of `value`: at once when `value` is one, after it settles when it is a promise. */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return isPromise(value) ? value.then(next) : next(value);
}
