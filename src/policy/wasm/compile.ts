import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

export interface CompileOptions {
  readonly src: string;
  readonly out: string;
  /** Debug information and assertions kept, no optimisation. */
  readonly debug: boolean;
}

/** The asc flags every rule is built with: memory imported so the host can cap it. */
export function ascArguments(options: CompileOptions): string[] {
  const mode = options.debug ? ['--debug', '--sourceMap'] : ['-O3', '--noAssert'];
  return [options.src, '--outFile', options.out, '--runtime', 'incremental', '--importMemory', ...mode];
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
