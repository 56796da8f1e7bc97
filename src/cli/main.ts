#!/usr/bin/env node
// `svc gate hook <harness>` runs before every tool call a harness makes: it loads only the gate,
// not the command-line program and its commands' modules, and those from the one precompiled
// file `npm run build` bundles (from the modules themselves when a build left it out).
const [, , command, sub, harness] = process.argv;
if (command === 'gate' && sub === 'hook' && harness !== undefined && !harness.startsWith('-')) {
  await runHookGate(harness);
} else {
  await import('./program.js');
}

async function runHookGate(harness: string): Promise<void> {
  // The harness protocol loads first and alone: a gate that cannot load still refuses in it.
  const [{ failedGateAnswer }, { deliver, hookHarnessOrExit }] = await Promise.all([import('../gate/hook-answer.js'), import('./hook-process.js')]);
  const known = hookHarnessOrExit(harness);
  const hook = await loadHookCommand().catch((err: unknown) => deliver(failedGateAnswer(known, err)));
  await hook.runHookCommand(known);
}

async function loadHookCommand(): Promise<typeof import('./gate-hook-command.js')> {
  const { loadHookBundle } = await import('./hook-bundle.js');
  return loadHookBundle()?.module ?? import('./gate-hook-command.js');
}
