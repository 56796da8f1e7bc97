import { runHook } from '../gate/hook.js';
import { failedGateAnswer, type HookHarness } from '../gate/hook-answer.js';
import { deliver } from './hook-process.js';
import { readStdin } from './stdin.js';

/** A hook's input past this is refused unread (a tool call's arguments are bounded at 1 MiB, its command at 256 KiB). */
const MAX_HOOK_INPUT = 4 * 1024 * 1024;

/** `svc gate hook <harness>` for a known harness: the call on stdin, the answer in its hook protocol, the exit code it reads. */
export async function runHookCommand(harness: HookHarness): Promise<never> {
  try {
    const stdin = await readStdin(MAX_HOOK_INPUT);
    deliver(await runHook(harness, stdin ?? '', process.env));
  } catch (err) {
    deliver(failedGateAnswer(harness, err));
  }
}
