import { Agent, request } from 'undici';
import { z } from 'zod';

/** Why the engine gave no usable answer; each one is "governance unavailable" for an enforcing rule. */
export type EngineFailure = 'not_configured' | 'host_not_self_hosted' | 'error' | 'timeout' | 'no_probabilities' | 'canary_failed' | 'too_many_enforcing_rules';

export class EngineUnavailable extends Error {
  constructor(
    readonly reason: EngineFailure,
    detail: string,
  ) {
    super(`${reason}: ${detail}`);
    this.name = 'EngineUnavailable';
  }
}

export interface YesNoAnswer {
  readonly pYes: number;
  /** The model the server says answered. */
  readonly model: string;
}

export const SYSTEM_INSTRUCTION =
  'You judge one narrow question about a subject. Answer with exactly one word: Yes or No.';

const topLogprobSchema = z.object({ token: z.string(), logprob: z.number() });
const completionSchema = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullable().optional() }).optional(),
        logprobs: z
          .object({ content: z.array(z.object({ token: z.string(), logprob: z.number(), top_logprobs: z.array(topLogprobSchema).optional() })).nullable().optional() })
          .nullable()
          .optional(),
      }),
    )
    .min(1),
});

type Completion = z.infer<typeof completionSchema>;

function normaliseToken(token: string): string {
  return token.replace(/^[\sĠ▁]+/u, '').replace(/[\s.!,:;"']+$/u, '').toLowerCase();
}

/**
 * p(yes) from the first generated token's top logprobs: the mass of every Yes variant ("Yes",
 * " yes", "YES", "Ġyes") over the mass of every Yes and No variant. Null when neither appears.
 */
export function pYesFromCompletion(completion: Completion): number | null {
  const first = completion.choices[0]!.logprobs?.content?.[0];
  if (first === undefined) return null;
  const candidates = first.top_logprobs && first.top_logprobs.length > 0 ? first.top_logprobs : [{ token: first.token, logprob: first.logprob }];
  let yes = 0;
  let no = 0;
  for (const { token, logprob } of candidates) {
    const word = normaliseToken(token);
    if (word === 'yes') yes += Math.exp(logprob);
    else if (word === 'no') no += Math.exp(logprob);
  }
  if (yes + no === 0 || !Number.isFinite(yes + no)) return null;
  return yes / (yes + no);
}

export interface ModelClientOptions {
  readonly url: string;
  readonly model: string;
  readonly apiKey: string | null;
}

/** An OpenAI-compatible chat endpoint on a self-hosted model server. */
export class ModelClient {
  private readonly dispatcher = new Agent({ connections: 32, keepAliveTimeout: 10_000 });

  constructor(readonly options: ModelClientOptions) {}

  private async complete(body: object, timeoutMs: number, signal?: AbortSignal): Promise<Completion> {
    const deadline = AbortSignal.timeout(timeoutMs);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.apiKey !== null) headers.authorization = `Bearer ${this.options.apiKey}`;
    let text: string;
    let status: number;
    try {
      const res = await request(`${this.options.url}/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        dispatcher: this.dispatcher,
        signal: signal === undefined ? deadline : AbortSignal.any([deadline, signal]),
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      if (deadline.aborted) throw new EngineUnavailable('timeout', `no answer within ${timeoutMs} ms`);
      throw new EngineUnavailable('error', (err as Error).message);
    }
    if (status !== 200) throw new EngineUnavailable('error', `the model server answered ${status}`);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new EngineUnavailable('error', 'the model server answered with something other than JSON');
    }
    const parsed = completionSchema.safeParse(json);
    if (!parsed.success) throw new EngineUnavailable('error', 'the model server answered without choices');
    return parsed.data;
  }

  /** Asks one yes/no question about `subject`; throws EngineUnavailable. */
  async askYesNo(ask: string, subject: string, timeoutMs: number, signal?: AbortSignal): Promise<YesNoAnswer> {
    const completion = await this.complete(
      {
        model: this.options.model,
        messages: [
          { role: 'system', content: SYSTEM_INSTRUCTION },
          { role: 'user', content: `Question: ${ask}\n\nSubject:\n${subject}\n\nAnswer Yes or No.` },
        ],
        max_tokens: 1,
        temperature: 0,
        logprobs: true,
        top_logprobs: 10,
      },
      timeoutMs,
      signal,
    );
    const pYes = pYesFromCompletion(completion);
    if (pYes === null) throw new EngineUnavailable('no_probabilities', 'the answer carried no Yes/No log probabilities');
    return { pYes, model: completion.model ?? this.options.model };
  }

  /** A free-text answer (the legacy judge's verdict and note). */
  async askText(system: string, user: string, timeoutMs: number, model = this.options.model): Promise<string> {
    const completion = await this.complete(
      { model, messages: [{ role: 'system', content: system }, { role: 'user', content: user }], max_tokens: 200, temperature: 0 },
      timeoutMs,
    );
    return completion.choices[0]!.message?.content ?? '';
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}
