import type { MessagePort, Worker } from 'node:worker_threads';

/** Methods one side of a channel answers: each takes structured-cloneable arguments. */
export type RpcHandlers = Record<string, (...args: never[]) => unknown>;

type Endpoint = MessagePort | Worker;

interface Request {
  readonly rpc: number;
  readonly method: string;
  readonly args: readonly unknown[];
}
interface Reply {
  readonly reply: number;
  readonly value?: unknown;
  readonly error?: { readonly message: string; readonly code?: string; readonly name?: string };
}

/** An answer the other side failed with; its code and error name say what failed there. */
export class RemoteCallError extends Error {
  constructor(
    readonly method: string,
    readonly remoteMessage: string,
    readonly code: string | undefined,
    readonly remoteName?: string,
  ) {
    super(`${method}: ${remoteMessage}`);
  }
}

/**
 * Calls between two threads over one message channel, both ways. A call is one message and its
 * answer another; a notification (`notify`) is one message with no answer. What one turn of the
 * event loop sends leaves as one batch: each message posted wakes the other thread, and under
 * load a turn holds many requests' calls. Messages are delivered in the order they were sent.
 * Messages that are not this channel's are left to the endpoint's other listeners. Calls pending
 * when the channel closes reject.
 */
export class RpcChannel<Remote extends RpcHandlers> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void; method: string }>();
  private closed = false;
  private outbox: Array<Request | Reply> = [];
  private flushing: NodeJS.Immediate | null = null;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly handlers: RpcHandlers,
  ) {
    endpoint.on('message', (message: unknown) => this.receive(message));
  }

  call<M extends keyof Remote & string>(method: M, ...args: Parameters<Remote[M]>): Promise<Awaited<ReturnType<Remote[M]>>> {
    if (this.closed) return Promise.reject(new RemoteCallError(method, 'the channel is closed', 'channel_closed'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, method });
      this.send({ rpc: id, method, args });
    });
  }

  notify<M extends keyof Remote & string>(method: M, ...args: Parameters<Remote[M]>): void {
    if (!this.closed) this.send({ rpc: 0, method, args });
  }

  /** Sends what this turn queued now rather than at its end (before the thread stops). */
  flush(): void {
    if (this.flushing !== null) clearImmediate(this.flushing);
    this.flushing = null;
    const batch = this.outbox;
    if (batch.length === 0) return;
    this.outbox = [];
    this.endpoint.postMessage(batch.length === 1 ? batch[0] : { batch });
  }

  private send(message: Request | Reply): void {
    this.outbox.push(message);
    this.flushing ??= setImmediate(() => this.flush());
  }

  /** Rejects every pending call; later calls reject at once. */
  close(reason = 'the channel is closed'): void {
    this.flush();
    this.closed = true;
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.reject(new RemoteCallError(p.method, reason, 'channel_closed'));
    }
  }

  private receive(message: unknown): void {
    if (typeof message !== 'object' || message === null) return;
    if ('batch' in message && Array.isArray(message.batch)) {
      for (const m of message.batch as unknown[]) this.receive(m);
      return;
    }
    if ('reply' in message) {
      const reply = message as Reply;
      const p = this.pending.get(reply.reply);
      if (p === undefined) return;
      this.pending.delete(reply.reply);
      if (reply.error === undefined) p.resolve(reply.value);
      else p.reject(new RemoteCallError(p.method, reply.error.message, reply.error.code, reply.error.name));
      return;
    }
    if ('rpc' in message) void this.answer(message as Request);
  }

  private async answer(request: Request): Promise<void> {
    const handler = this.handlers[request.method] as ((...args: readonly unknown[]) => unknown) | undefined;
    let reply: Reply;
    try {
      if (handler === undefined) throw Object.assign(new Error(`no method ${request.method}`), { code: 'no_such_method' });
      const value = await handler(...request.args);
      if (request.rpc === 0) return;
      reply = { reply: request.rpc, value };
    } catch (err) {
      if (request.rpc === 0) return;
      const e = err as { message?: unknown; code?: unknown; constructor?: { name?: string } };
      reply = {
        reply: request.rpc,
        error: { message: String(e?.message ?? err), code: typeof e?.code === 'string' ? e.code : undefined, name: e?.constructor?.name },
      };
    }
    if (!this.closed) this.send(reply);
  }
}
