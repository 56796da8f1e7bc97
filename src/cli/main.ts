#!/usr/bin/env node
// `svc gate hook <harness>` runs before every tool call a harness makes: it loads only the gate,
// not the command-line program and its commands' modules.
const [, , command, sub, harness] = process.argv;
if (command === 'gate' && sub === 'hook' && harness !== undefined && !harness.startsWith('-')) {
  const { runHookCommand } = await import('./gate-hook-command.js');
  await runHookCommand(harness);
} else {
  await import('./program.js');
}
