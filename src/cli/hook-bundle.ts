import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

export type HookCommandModule = typeof import('./gate-hook-command.js');

const BUNDLE = fileURLToPath(new URL('./gate-hook.bundle.cjs', import.meta.url));
const CACHE = fileURLToPath(new URL('./gate-hook.bundle.cache', import.meta.url));
const DIGEST_BYTES = 32;

/** The bundle wrapped as Node wraps a CommonJS module. */
function source(): string {
  return `(function (exports, require, module, __filename, __dirname) {${readFileSync(BUNDLE, 'utf8')}\n})`;
}

/** V8 checks a code cache against its source's length only: the cache file starts with the SHA-256 of the source it was made from. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** The bundle holds no `import()` (its build refuses one): a script has no loader for it. */
function compile(text: string, cachedData?: Buffer): Script {
  return new Script(text, { filename: BUNDLE, cachedData });
}

function run(script: Script): HookCommandModule {
  const module = { exports: {} as HookCommandModule };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(BUNDLE), module, BUNDLE, dirname(BUNDLE));
  return module.exports;
}

/**
 * The hook command from the bundle `npm run build` makes (scripts/bundle-gate-hook.js), compiled
 * with the code cache made with it when it was made from this very bundle and V8 takes it (same
 * Node, same V8 flags); otherwise compiled as any script. Null when the build made no bundle.
 * `cacheUsed`: the cache was taken.
 */
export function loadHookBundle(): { module: HookCommandModule; cacheUsed: boolean } | null {
  if (!existsSync(BUNDLE)) return null;
  const text = source();
  const cache = existsSync(CACHE) ? readFileSync(CACHE) : null;
  const cachedData = cache !== null && cache.subarray(0, DIGEST_BYTES).equals(digest(text)) ? cache.subarray(DIGEST_BYTES) : undefined;
  const script = compile(text, cachedData);
  return { module: run(script), cacheUsed: cachedData !== undefined && !script.cachedDataRejected };
}

/**
 * Writes the bundle's code cache: compiled and its modules initialised (zod's schemas built), as
 * V8 serialises it. Only the build does this, beside the code: a code cache is trusted as code,
 * so the hook never writes one where it runs.
 */
export function writeHookBundleCache(): void {
  const text = source();
  const script = compile(text);
  run(script);
  writeFileSync(CACHE, Buffer.concat([digest(text), script.createCachedData()]));
}
