#!/usr/bin/env node
// `svc gate hook <harness>` runs before every tool call a harness makes: it loads only the gate,
// not the command-line program and its commands' modules, and those from the one precompiled
// file `npm run build` bundles (from the modules themselves when a build left it out).
const [, , command, sub, harness] = process.argv;
if (command === 'gate' && sub === 'hook' && harness !== undefined && !harness.startsWith('-')) {
  const { loadHookBundle } = await import('./hook-bundle.js');
  const { runHookCommand } = loadHookBundle()?.module ?? (await import('./gate-hook-command.js'));
  await runHookCommand(harness);
} else {
  await import('./program.js');
}
