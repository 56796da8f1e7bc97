import { appendFile, mkdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { svcHome } from '../lib/paths.js';

/**
 * The machine's hook-event log (`$SVC_HOME/events/hook-events.jsonl`): gate decisions that could not
 * be reported when they were made wait here, and `svc connect` drains them to `POST /hook-events`
 * (each carries its eventId, so a replay is harmless). Bounded: past MAX_LOG_BYTES new events are
 * dropped rather than filling the disk.
 */

export const MAX_LOG_BYTES = 16 * 1024 * 1024;
const BATCH = 500;

export function eventLogPath(env: NodeJS.ProcessEnv): string {
  return join(svcHome(env), 'events', 'hook-events.jsonl');
}

/** Appends events; false when the log is full (they are dropped) or cannot be written. */
export async function appendEvents(file: string, events: readonly object[]): Promise<boolean> {
  try {
    const size = await stat(file).then((s) => s.size, () => 0);
    if (size > MAX_LOG_BYTES) return false;
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await appendFile(file, events.map((e) => `${JSON.stringify(e)}\n`).join(''), { mode: 0o600 });
    return true;
  } catch {
    return false;
  }
}

/**
 * Sends the logged events in batches, oldest first. The log is moved aside while it is sent (events
 * logged meanwhile start a new one); what could not be sent is logged again. Answers how many were sent.
 */
export async function drainEvents(file: string, send: (events: object[]) => Promise<void>): Promise<{ sent: number; left: number }> {
  const draining = `${file}.draining`;
  try {
    await rename(file, draining);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { sent: 0, left: 0 };
    throw err;
  }
  const events: object[] = [];
  for (const line of (await readFile(draining, 'utf8')).split('\n')) {
    if (line.trim() === '') continue;
    try {
      events.push(JSON.parse(line) as object);
    } catch {
      // A torn line (a crash mid-append) is dropped.
    }
  }
  let sent = 0;
  try {
    for (; sent < events.length; sent += BATCH) await send(events.slice(sent, sent + BATCH));
  } catch {
    await appendEvents(file, events.slice(sent));
  }
  await unlink(draining).catch(() => undefined);
  return { sent: Math.min(sent, events.length), left: Math.max(0, events.length - sent) };
}
