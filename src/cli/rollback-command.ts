import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { appendEvents, eventLogPath } from '../gate/event-log.js';
import { printable } from '../lib/printable.js';
import { listEntries, RollbackError, restoreEntry, type RollbackEntry } from '../machine/rollback.js';
import { describeFailure, linkedApi } from './control-plane-link.js';

/**
 * `svc rollback` lists the pre-images the hook gate captured of flagged file changes (newest
 * first); `svc rollback --id <id>` restores exactly that one (see machine/rollback.ts), appends a
 * `tool_reverted` event to the hook-event log and, when logged in, reports it to the control plane
 * (`svc connect` sends it later otherwise; the event id makes a second delivery harmless).
 * Exit 1 when the restore is refused (unknown or evicted id, a path that moved, …).
 */

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

function line(e: RollbackEntry): string {
  const what = e.state === 'captured' ? `${e.size} bytes` : e.state === 'absent' ? 'did not exist (restore deletes it)' : `not captured: ${e.reason}`;
  const by = e.trigger.kind === 'restore' ? 'before a restore' : `${e.trigger.tool ?? 'a tool call'} (${e.trigger.reasons.join('; ')})`;
  return `${e.id}  ${e.at}  ${printable(e.path)}  ${printable(what)}  ${printable(by)}`;
}

async function report(entry: RollbackEntry, undo: RollbackEntry, action: string): Promise<string> {
  const env = process.env;
  const event = {
    eventId: randomUUID(),
    type: 'tool_reverted',
    at: new Date().toISOString(),
    gateSource: 'cli',
    harness: entry.trigger.harness,
    sessionId: entry.trigger.sessionId,
    toolName: entry.trigger.tool,
    reason: `svc rollback ${action === 'deleted' ? 'deleted the file the call created' : 'restored the pre-image'} (${entry.id})`,
    rollbackId: entry.id,
    undoId: undo.id,
    file: basename(entry.path),
  };
  const logged = await appendEvents(eventLogPath(env), [event]);
  let api;
  try {
    api = linkedApi(env).api;
  } catch {
    return logged ? 'tool_reverted logged (not logged in: not reported)' : 'tool_reverted could not be logged (the event log is full or not writable)';
  }
  try {
    await api.json('POST', '/hook-events', { events: [event] }, { timeoutMs: 5000 });
    return 'tool_reverted logged and reported';
  } catch (err) {
    return `tool_reverted logged; not reported now (${describeFailure(err)}): svc connect sends it later`;
  }
}

export function registerRollbackCommand(program: Command): void {
  program
    .command('rollback')
    .description('list the captured pre-images of flagged file changes; --id <id> restores exactly one (the current file is captured first)')
    .option('--id <id>', 'the entry to restore')
    .option('--json', 'as JSON', false)
    .action(async (opts: { id?: string; json: boolean }) => {
      try {
        if (opts.id === undefined) {
          const entries = await listEntries(process.env);
          process.stdout.write(opts.json ? json({ entries }) : entries.length === 0 ? 'no pre-images captured\n' : `${entries.map(line).join('\n')}\n`);
          return;
        }
        const restored = await restoreEntry(opts.id, process.env);
        const reported = await report(restored.entry, restored.undo, restored.action);
        if (opts.json) process.stdout.write(json({ restored: restored.entry, action: restored.action, undo: restored.undo, event: reported }));
        else {
          const path = printable(restored.entry.path);
          const done = restored.action === 'written' ? `${path} restored from ${restored.entry.id}` : restored.action === 'deleted' ? `${path} deleted: it did not exist before the call (${restored.entry.id})` : `${path} is already absent, as before the call (${restored.entry.id})`;
          process.stdout.write(`${done}\nundo with: svc rollback --id ${restored.undo.id}\n${reported}\n`);
        }
      } catch (err) {
        process.stderr.write(`svc rollback: ${err instanceof RollbackError ? err.message : `the restore failed: ${(err as Error).message}`}\n`);
        process.exitCode = 1;
      }
    });
}
