/**
 * A base URL without the slashes it ends with, so paths can be appended to it. Trimmed by hand:
 * `/\/+$/` is tried at every slash of a run, in quadratic time.
 */
export function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charCodeAt(end - 1) === 0x2f) end--;
  return end === url.length ? url : url.slice(0, end);
}
