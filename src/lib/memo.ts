/**
 * `fn` with its results remembered for up to `limit` keys, or keys of `maxTotalChars` characters
 * in all (then forgotten all at once). A key longer than `maxKeyChars` is not remembered (it would
 * be kept alive with its result). Each caller owns its cache, so one is never shared between
 * threads.
 */
export function memoize<T>(fn: (key: string) => T, limit: number, maxKeyChars = Infinity, maxTotalChars = Infinity): (key: string) => T {
  const results = new Map<string, T>();
  let totalChars = 0;
  return (key) => {
    if (key.length > maxKeyChars) return fn(key);
    const known = results.get(key);
    if (known !== undefined || results.has(key)) return known as T;
    if (results.size >= limit || totalChars + key.length > maxTotalChars) {
      results.clear();
      totalChars = 0;
    }
    const result = fn(key);
    results.set(key, result);
    totalChars += key.length;
    return result;
  };
}
