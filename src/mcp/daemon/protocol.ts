import { join } from 'node:path';
import type { Socket } from 'node:net';
import { z } from 'zod';

/**
 * The MCP daemon's local protocol: one JSON object per line over a Unix socket. A wrapper opens
 * one connection per harness session, says `hello` with its server's name, then asks for each
 * verdict the relay needs; every request with an `id` is answered in order with the same `id`.
 */

/** A line longer than this (a huge tool result) ends the connection: the wrapper then governs in its own process. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** `SVC_MCP_DAEMON_SOCKET`, else `$SVC_HOME/mcp-daemon.sock`. */
export function daemonSocketPath(env: NodeJS.ProcessEnv, home: string): string {
  return env.SVC_MCP_DAEMON_SOCKET || join(home, 'mcp-daemon.sock');
}

const id = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const record = z.record(z.string(), z.unknown());
const name = z.string().max(256);

export const daemonRequestSchema = z.discriminatedUnion('op', [
  z.strictObject({ id, op: z.literal('hello'), server: name.min(1), memberId: z.string().max(256).nullable() }),
  z.strictObject({
    id,
    op: z.literal('judge'),
    tool: name,
    args: record.optional(),
    ctx: z.strictObject({ workspace: z.string().max(256), model: z.string().max(256), harness: z.string().max(256).nullable(), session: z.string().max(256).nullable(), traceId: z.string().max(128) }),
  }),
  z.strictObject({ op: z.literal('answered'), callId: z.string().max(128), result: record }),
  z.strictObject({ id, op: z.literal('review'), tool: name, result: record }),
  z.strictObject({ id, op: z.literal('list'), result: record }),
  z.strictObject({ id, op: z.literal('observe'), tools: z.array(z.unknown()).max(10_000) }),
]);
export type DaemonRequest = z.infer<typeof daemonRequestSchema>;

export const daemonReplySchema = z.union([
  z.strictObject({ id, ok: z.literal(true), value: z.unknown() }),
  z.strictObject({ id: id.nullable(), ok: z.literal(false), error: z.string() }),
]);
export type DaemonReply = z.infer<typeof daemonReplySchema>;

/** Calls `onLine` with each complete line the socket delivers; a line past MAX_LINE_BYTES calls `onOverflow` instead. */
export function readLines(socket: Socket, onLine: (line: string) => void, onOverflow: () => void): void {
  let buffered: Buffer[] = [];
  let size = 0;
  socket.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, start)) {
      const line = Buffer.concat([...buffered, chunk.subarray(start, at)]).toString('utf8');
      buffered = [];
      size = 0;
      start = at + 1;
      if (line.trim() !== '') onLine(line);
    }
    if (start < chunk.length) {
      size += chunk.length - start;
      if (size > MAX_LINE_BYTES) {
        buffered = [];
        size = 0;
        onOverflow();
        return;
      }
      buffered.push(chunk.subarray(start));
    }
  });
}
