import { HOOK_HARNESSES, type HookAnswer, type HookHarness } from '../gate/hook-answer.js';

// `svc gate hook` as a process: what it writes and the status it ends with. Loads nothing but the
// harness protocol, so the hook can answer with it when the gate itself cannot load.

/** `name` as a harness the hook speaks to; an unknown one ends the process with exit 2 and the names it knows. */
export function hookHarnessOrExit(name: string): HookHarness {
  if ((HOOK_HARNESSES as readonly string[]).includes(name)) return name as HookHarness;
  process.stderr.write(`svc: unknown harness '${name}': ${HOOK_HARNESSES.join(', ')}\n`);
  process.exit(2);
}

/** Writes an answer as the harness reads it and ends the process with its exit code. */
export function deliver(answer: HookAnswer): never {
  if (answer.stdout !== '') process.stdout.write(`${answer.stdout}\n`);
  if (answer.stderr !== '') process.stderr.write(`${answer.stderr}\n`);
  process.exit(answer.exitCode);
}
