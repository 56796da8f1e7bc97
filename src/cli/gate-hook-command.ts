import { HOOK_HARNESSES, runHook, type HookHarness } from '../gate/hook.js';
import { readStdin } from './stdin.js';

/** A hook's input past this is refused unread (a tool call's arguments are bounded at 1 MiB, its command at 256 KiB). */
const MAX_HOOK_INPUT = 4 * 1024 * 1024;

/** `svc gate hook <harness>`: the call on stdin, the answer in the harness's hook protocol, the exit code it reads. */
export async function runHookCommand(harness: string): Promise<never> {
  if (!(HOOK_HARNESSES as readonly string[]).includes(harness)) {
    process.stderr.write(`svc: unknown harness '${harness}': ${HOOK_HARNESSES.join(', ')}\n`);
    process.exit(2);
  }
  try {
    const stdin = await readStdin(MAX_HOOK_INPUT);
    const answer = await runHook(harness as HookHarness, stdin ?? '', process.env);
    if (answer.stdout !== '') process.stdout.write(`${answer.stdout}\n`);
    if (answer.stderr !== '') process.stderr.write(`${answer.stderr}\n`);
    process.exit(answer.exitCode);
  } catch (err) {
    process.stderr.write(`svc gate hook: ${(err as Error).message}\n`);
    process.exit(2);
  }
}
