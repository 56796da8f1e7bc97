import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** How the wrapped server ended: its exit code, or the signal that ended it. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface ChildTransportOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** The server's whole environment (a wrapped server sees what the harness gave the wrapper). */
  readonly env: NodeJS.ProcessEnv;
  readonly cwd?: string;
}

/**
 * Messages kept from a server before anyone listens: a server speaks when spoken to, and sends at
 * most a log line or two of its own before that; past this many it is not kept waiting in memory.
 */
const MAX_UNHEARD = 1000;

/**
 * The MCP client side of a stdio server: spawns it and speaks newline-delimited JSON-RPC over its
 * stdin and stdout with the SDK's own framing. Unlike the SDK's StdioClientTransport it owns the
 * child process outright, so the wrapper can pass the server the harness's full environment,
 * leave its stderr on the wrapper's stderr, and report how it exited (`exited`).
 */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private listener: ((message: JSONRPCMessage) => void) | undefined;
  /** Messages the server sent before anyone listened: the wrapper starts it before it loads the relay. */
  private unheard: JSONRPCMessage[] = [];
  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();
  private exit: Promise<ChildExit> | undefined;

  constructor(private readonly options: ChildTransportOptions) {}

  get onmessage(): ((message: JSONRPCMessage) => void) | undefined {
    return this.listener;
  }

  /** The first listener is handed what the server sent before it came, in order. */
  set onmessage(listener: ((message: JSONRPCMessage) => void) | undefined) {
    this.listener = listener;
    if (listener === undefined) return;
    const unheard = this.unheard;
    this.unheard = [];
    for (const message of unheard) listener(message);
  }

  /** Resolves once the server runs; rejects when it cannot be started (no such command, …). */
  async start(): Promise<void> {
    const child = spawn(this.options.command, [...this.options.args], { env: this.options.env, cwd: this.options.cwd, stdio: ['pipe', 'pipe', 'inherit'] });
    this.child = child;
    this.exit = once(child, 'close').then(
      ([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }),
      () => ({ code: null, signal: null }),
    );
    child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
    child.stdout!.on('error', (err) => this.onerror?.(err));
    // A server that died mid-write leaves EPIPE on its stdin: reported, and the close follows.
    child.stdin!.on('error', (err) => this.onerror?.(err));
    void this.exit.then(() => this.onclose?.());
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
  }

  /** How the server ended; pending until it has. */
  get exited(): Promise<ChildExit> {
    if (this.exit === undefined) throw new Error('the server has not been started');
    return this.exit;
  }

  /** Sends the server a signal (one the wrapper received and passes on). */
  kill(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (stdin === undefined || stdin === null || stdin.destroyed || stdin.writableEnded) throw new Error('the MCP server is not running');
    if (!stdin.write(serializeMessage(message))) await once(stdin, 'drain');
  }

  /**
   * Ends the server's stdin, which a stdio MCP server reads as the end of the session. The server
   * gets `graceMs` to exit on its own, then SIGTERM, then as long again before SIGKILL.
   */
  async close(graceMs = 2000): Promise<void> {
    const child = this.child;
    if (child === undefined || this.exit === undefined) return;
    if (!child.stdin!.writableEnded) child.stdin!.end();
    const gone = (): Promise<boolean> => Promise.race([this.exit!.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), graceMs).unref())]);
    if (await gone()) return;
    child.kill('SIGTERM');
    if (await gone()) return;
    child.kill('SIGKILL');
    await this.exit;
  }

  private read(chunk: Buffer): void {
    try {
      this.buffer.append(chunk);
    } catch (err) {
      // One message past the buffer's bound (10 MB): it is dropped and reported.
      this.onerror?.(err as Error);
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (err) {
        // A line that is not JSON-RPC (a server logging to stdout) is reported and skipped.
        this.onerror?.(err as Error);
        continue;
      }
      if (message === null) return;
      if (this.listener !== undefined) this.listener(message);
      else if (this.unheard.length < MAX_UNHEARD) this.unheard.push(message);
      else this.onerror?.(new Error(`the MCP server sent more than ${MAX_UNHEARD} messages before the wrapper listened: this one was dropped`));
    }
  }
}
