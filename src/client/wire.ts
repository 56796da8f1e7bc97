import { z } from 'zod';

/**
 * The shapes of what the gateway answers, checked before the client reads them: a chat
 * completion, a streamed chunk, an error body (OpenAI and Anthropic shapes), and the control
 * plane's budget. Unknown fields pass: providers add fields, and the client reads only these.
 */

const toolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal('function').default('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const usageSchema = z
  .looseObject({ prompt_tokens: z.number().nonnegative(), completion_tokens: z.number().nonnegative(), total_tokens: z.number().nonnegative().optional() })
  .nullish();

const textPartSchema = z.looseObject({ type: z.string(), text: z.string().optional(), refusal: z.string().optional() });

export const chatCompletionSchema = z.looseObject({
  id: z.string().optional(),
  model: z.string().optional(),
  choices: z
    .array(
      z.looseObject({
        index: z.number().optional(),
        message: z.looseObject({
          role: z.literal('assistant').default('assistant'),
          content: z.union([z.string(), z.array(textPartSchema)]).nullish(),
          refusal: z.string().nullish(),
          tool_calls: z.array(toolCallSchema).nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: usageSchema,
});
export type ChatCompletionWire = z.infer<typeof chatCompletionSchema>;

export const chatChunkSchema = z.looseObject({
  id: z.string().optional(),
  model: z.string().optional(),
  choices: z
    .array(
      z.looseObject({
        index: z.number().optional(),
        delta: z
          .looseObject({
            content: z.string().nullish(),
            refusal: z.string().nullish(),
            tool_calls: z
              .array(
                z.looseObject({
                  index: z.number().int().nonnegative(),
                  id: z.string().nullish(),
                  function: z.looseObject({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .default([]),
  usage: usageSchema,
});
export type ChatChunkWire = z.infer<typeof chatChunkSchema>;

/** `{"error":{message,type,code,param,trace_id,incident_id}}`, or Anthropic's `{"type":"error","error":{…}}`. */
export const errorBodySchema = z.looseObject({
  error: z.looseObject({
    message: z.string(),
    type: z.string().nullish(),
    code: z.union([z.string(), z.number()]).nullish(),
    trace_id: z.string().nullish(),
    incident_id: z.string().nullish(),
  }),
});
export type ErrorBodyWire = z.infer<typeof errorBodySchema>;

/** GET /api/v1/budget on the control plane. */
export const budgetBodySchema = z.looseObject({
  dailyUsd: z.number().nonnegative(),
  dailyIsDefault: z.boolean().optional(),
  monthlyUsd: z.number().nonnegative().nullable(),
  spentTodayUsd: z.number().nonnegative(),
  spentThisMonthUsd: z.number().nonnegative(),
});
export type BudgetBodyWire = z.infer<typeof budgetBodySchema>;

/** A response header's value: the first when repeated. */
export type ResponseHeaders = Record<string, string | string[] | undefined>;

export function headerValue(headers: ResponseHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
