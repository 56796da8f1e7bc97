import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface CompileOptions {
  readonly src: string;
  readonly out: string;
  /** Debug information and assertions kept, no optimisation. */
  readonly debug: boolean;
}

/** Built into every rule: it marks a heap the host puts back after each call (assembly/sdk/arena.ts). */
const ARENA_ENTRY = fileURLToPath(new URL('../../../assembly/sdk/arena.ts', import.meta.url));

/**
 * The asc flags every rule is built with: memory imported so the host can cap it, and the stub
 * runtime (an allocator that never frees) with the arena entry, so the host rewinds the heap after
 * each call instead of the rule collecting garbage.
 */
export function ascArguments(options: CompileOptions): string[] {
  const mode = options.debug ? ['--debug', '--sourceMap'] : ['-O3', '--noAssert'];
  return [options.src, ARENA_ENTRY, '--outFile', options.out, '--runtime', 'stub', '--importMemory', ...mode];
}

export class CompileError extends Error {}

/**
 * Compiles an AssemblyScript rule with the assemblyscript compiler (a development dependency,
 * loaded only when compiling). Throws CompileError with the compiler's diagnostics.
 */
export async function compileRule(options: CompileOptions): Promise<void> {
  await mkdir(dirname(options.out), { recursive: true });
  let asc: typeof import('assemblyscript/asc').default;
  try {
    asc = (await import('assemblyscript/asc')).default;
  } catch (err) {
    throw new CompileError(`the AssemblyScript compiler is not installed (npm install --save-dev assemblyscript): ${(err as Error).message}`);
  }
  let diagnostics = '';
  const sink = { write: (chunk: string | Uint8Array) => ((diagnostics += chunk.toString()), true) };
  const result = await asc.main(ascArguments(options), { stdout: sink, stderr: sink });
  if (result.error) throw new CompileError(`${result.error.message}\n${diagnostics}`.trim());
}
