import { z } from 'zod';
import { admitRule } from '../../policy/wasm/module-check.js';
import { MAX_WASM_RULE_BYTES, wasmBase64Schema, wasmRuleNameSchema, wasmRulePrioritySchema } from '../../config/sync-document.js';
import { DEFAULT_PRIORITY } from '../../policy/wasm/rule-files.js';
import { ValidationError } from '../errors.js';

/** POST /wasm-rules */
export const wasmRuleCreateBody = z.strictObject({ name: wasmRuleNameSchema, priority: wasmRulePrioritySchema.default(DEFAULT_PRIORITY), wasm: wasmBase64Schema });

/** PUT /wasm-rules/:ruleId: a partial update, at least one field. */
export const wasmRuleUpdateBody = z
  .strictObject({ name: wasmRuleNameSchema.optional(), priority: wasmRulePrioritySchema.optional(), wasm: wasmBase64Schema.optional() })
  .refine((b) => b.name !== undefined || b.priority !== undefined || b.wasm !== undefined, { message: 'send name, priority, wasm or several' });

/** GET /wasm-rules and /wasm-rules/:ruleId: the module's bytes only when asked for. */
export const wasmRuleReadQuery = z.strictObject({ include: z.literal('wasm').optional() });

/**
 * Decodes an uploaded module and checks it is a rule a gateway will run: a WebAssembly module
 * of this host's ABI version that loads under the gateway's memory cap and allows a plain file
 * read. Answers the bytes; a module that fails is a 400 naming why.
 */
export async function admitUploadedModule(base64: string, name: string): Promise<Uint8Array<ArrayBuffer>> {
  const bytes = new Uint8Array(Buffer.from(base64, 'base64'));
  const refuse = (message: string) => new ValidationError(`wasm: ${message}`, [{ path: 'wasm', message }]);
  if (bytes.length > MAX_WASM_RULE_BYTES) throw refuse(`the module is ${bytes.length} bytes; at most ${MAX_WASM_RULE_BYTES} are accepted`);
  try {
    await admitRule(bytes, name);
  } catch (err) {
    throw refuse((err as Error).message);
  }
  return bytes;
}
