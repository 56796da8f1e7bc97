import type { z } from 'zod';
import { ValidationError, type ValidationIssue } from './errors.js';

/** Zod issues as `{ path, message }`, the path dotted ("(root)" for the value itself). */
export function zodIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((i) => ({ path: i.path.length > 0 ? i.path.join('.') : '(root)', message: i.message }));
}

/** One validation error naming every problem and where it is. */
export function validationError(error: z.ZodError, status = 400): ValidationError {
  const issues = zodIssues(error);
  return new ValidationError(issues.map((i) => `${i.path}: ${i.message}`).join('; '), issues, status);
}
