import type { RouteKind } from './routes.js';
import type { ToolCallReview } from './tool-calls-review.js';
import { parseSseEvents } from '../lib/sse.js';
import { ChatStream } from './tool-calls/chat-stream.js';
import { MessagesStream } from './tool-calls/messages-stream.js';
import { ResponsesStream } from './tool-calls/responses-stream.js';
import type { GateIO, StreamShape } from './tool-calls/shape.js';

const SHAPES: Partial<Record<RouteKind, new (io: GateIO) => StreamShape>> = { chat: ChatStream, messages: MessagesStream, responses: ResponsesStream };

/**
 * Sits in a streamed response between the upstream and the client: events pass straight through
 * until a tool call starts; its events are held until its arguments are complete, put to the
 * review, then released, or replaced by a notice the agent reads. Order is kept: events arriving
 * while a decision is pending wait behind it.
 */
export class ToolCallStreamGate {
  private readonly shape: StreamShape;
  private input: Buffer[] = [];
  private output: string[] = [];
  private draining: Promise<void> | null = null;

  private constructor(
    Shape: new (io: GateIO) => StreamShape,
    review: ToolCallReview,
    private readonly emit: (data: Buffer) => void,
  ) {
    this.shape = new Shape({ out: (text) => this.output.push(text), verdicts: (calls) => review.verdicts(calls) });
  }

  /** A gate for the route's stream format, or null when its streams carry no tool calls. */
  static for(kind: RouteKind, review: ToolCallReview, emit: (data: Buffer) => void): ToolCallStreamGate | null {
    const Shape = SHAPES[kind];
    return Shape === undefined ? null : new ToolCallStreamGate(Shape, review, emit);
  }

  /** Takes a run of complete events. */
  push(events: Buffer): void {
    if (this.draining === null && this.shape.idle && !this.mayConcernCalls(events)) {
      this.emit(events);
      return;
    }
    this.input.push(events);
    // Assigned before the drain starts, so the drain's own end can clear it.
    this.draining ??= Promise.resolve().then(() => this.drain());
  }

  private mayConcernCalls(events: Buffer): boolean {
    for (const marker of this.shape.markers) if (events.includes(marker)) return true;
    return false;
  }

  /** Resolves once everything pushed has been written out, held calls decided. */
  async finish(): Promise<void> {
    while (this.draining !== null) await this.draining;
    const pending = this.shape.end();
    if (pending !== undefined) await pending;
    this.flush();
  }

  private async drain(): Promise<void> {
    try {
      while (this.input.length > 0) {
        for (const ev of parseSseEvents(this.input.shift()!)) {
          const pending = this.shape.accept(ev);
          if (pending === undefined) continue;
          this.flush();
          await pending;
        }
        this.flush();
      }
    } finally {
      this.draining = null;
    }
  }

  private flush(): void {
    if (this.output.length === 0) return;
    const text = this.output.join('\n\n') + '\n\n';
    this.output = [];
    this.emit(Buffer.from(text));
  }
}
