import type { IncomingHttpHeaders } from 'node:http';

export interface AnswerSpec {
  /** p(yes) of the first token (default 0.05). */
  pYes?: number;
  delayMs?: number;
  /** Answer with this HTTP status in OpenAI's error shape. */
  status?: number;
  /** Leave logprobs out of the answer. */
  noLogprobs?: boolean;
  /** Free-text answer (requests without logprobs). */
  text?: string;
  /** Split each answer's mass over "Yes"/" yes" and "No"/" no" tokens. */
  variants?: boolean;
}

export interface MatchedAnswer extends AnswerSpec {
  /** A substring of the user message (question and subject). */
  match: string;
}

export interface DecideModel {
  /** The OpenAI-compatible base URL, e.g. http://127.0.0.1:5002/v1 */
  url: string;
  origin: string;
  port: number;
  /** The last 1000 chat requests, oldest first. */
  requests: Array<{ headers: IncomingHttpHeaders; body: any }>;
  /** Yes/no questions asked so far (canary questions included). */
  readonly questions: number;
  setAnswers(list: MatchedAnswer[]): void;
  /** `wrong` answers the built-in known-answer canary wrongly. */
  setCanary(mode: 'right' | 'wrong'): void;
  reset(): void;
  close(): Promise<void>;
}

export function startDecideModel(opts?: { port?: number; host?: string }): Promise<DecideModel>;
