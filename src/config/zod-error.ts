import type { z } from 'zod';

/** Renders a zod failure as one line per problem, each naming its path. */
export function describeZodError(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
}
