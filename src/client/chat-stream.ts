import type { BudgetStatus } from './budget.js';
import type { OpenAIAssistantMessage, OpenAIToolCall } from './messages.js';
import type { Enforcement, HijackEvent } from './outcomes.js';
import type { ChatChunkWire } from './wire.js';

/** What a chat call answers. */
export interface ChatResult {
  /** The assistant's text ('' when it only called tools). */
  readonly text: string;
  readonly message: OpenAIAssistantMessage;
  readonly toolCalls: readonly OpenAIToolCall[];
  readonly finishReason: string | null;
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number } | null;
  readonly model: string | null;
  readonly traceId: string | null;
  /** The proxy's enforcement; on a stream, HIJACK when the answer carried a steer the header could not know of yet. */
  readonly enforcement: Enforcement | null;
  /** The steer, when the request was steered (the `hijack` event's payload). */
  readonly hijack: HijackEvent | null;
  /** The budget from this answer's `X-Svc-Budget-*` headers. */
  readonly budget: BudgetStatus | null;
}

/** One streamed chunk as it arrived. */
export interface ChatDelta {
  /** The text this chunk adds ('' for chunks that carry only tool-call pieces, a finish reason or usage). */
  readonly text: string;
  readonly finishReason: string | null;
  /** The chunk's JSON as the gateway sent it. */
  readonly raw: Record<string, unknown>;
}

/**
 * A streamed chat answer: iterate it for the chunks as they come, and/or await `final()` for the
 * assembled result (which reads the rest of the stream if nobody iterates). The request goes out
 * when the stream is first read. A refusal throws from the iteration and from `final()`.
 */
export class ChatStream implements AsyncIterable<ChatDelta> {
  private started = false;
  private readonly settled: Promise<ChatResult>;
  private resolve!: (result: ChatResult) => void;
  private reject!: (err: unknown) => void;

  constructor(private readonly produce: () => AsyncGenerator<ChatDelta, ChatResult, undefined>) {
    this.settled = new Promise<ChatResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Whoever reads the stream sees its errors; final() is only one way to.
    this.settled.catch(() => undefined);
  }

  [Symbol.asyncIterator](): AsyncIterator<ChatDelta> {
    if (this.started) throw new Error('a chat stream can be read only once');
    this.started = true;
    const gen = this.produce();
    return {
      next: async () => {
        try {
          const step = await gen.next();
          if (step.done === true) {
            this.resolve(step.value);
            return { done: true, value: undefined };
          }
          return { done: false, value: step.value };
        } catch (err) {
          this.reject(err);
          throw err;
        }
      },
      return: async () => {
        await gen.return(undefined as never);
        this.reject(new Error('the chat stream was closed before its end'));
        return { done: true, value: undefined };
      },
    };
  }

  /** The assembled answer once the stream has ended. */
  async final(): Promise<ChatResult> {
    if (!this.started) {
      for await (const _ of this) {
        // Read to the end; the result is assembled as it goes.
      }
    }
    return this.settled;
  }
}

interface ToolCallDraft {
  id: string;
  name: string;
  arguments: string;
}

/** Folds streamed chat chunks (choice 0) into the answer they add up to. */
export class ChunkAssembler {
  text = '';
  finishReason: string | null = null;
  usage: ChatResult['usage'] = null;
  model: string | null = null;
  private refusal = '';
  private readonly calls = new Map<number, ToolCallDraft>();

  /** Takes one chunk; returns the text it adds. */
  add(chunk: ChatChunkWire): ChatDelta['text'] {
    if (chunk.model !== undefined) this.model ??= chunk.model;
    if (chunk.usage !== null && chunk.usage !== undefined) this.usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
    const choice = chunk.choices.find((c) => (c.index ?? 0) === 0);
    if (choice === undefined) return '';
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) this.finishReason = choice.finish_reason;
    const delta = choice.delta;
    if (delta === null || delta === undefined) return '';
    for (const piece of delta.tool_calls ?? []) {
      let draft = this.calls.get(piece.index);
      if (draft === undefined) this.calls.set(piece.index, (draft = { id: '', name: '', arguments: '' }));
      if (piece.id) draft.id = piece.id;
      if (piece.function?.name) draft.name += piece.function.name;
      if (piece.function?.arguments) draft.arguments += piece.function.arguments;
    }
    if (delta.refusal) this.refusal += delta.refusal;
    const text = delta.content ?? '';
    this.text += text;
    return text;
  }

  get toolCalls(): OpenAIToolCall[] {
    return [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, d]) => ({ id: d.id, type: 'function', function: { name: d.name, arguments: d.arguments } }));
  }

  get message(): OpenAIAssistantMessage {
    const calls = this.toolCalls;
    const message: OpenAIAssistantMessage = { role: 'assistant', content: this.text === '' && calls.length > 0 ? null : this.text };
    if (calls.length > 0) message.tool_calls = calls;
    if (this.refusal !== '') message.refusal = this.refusal;
    return message;
  }
}
