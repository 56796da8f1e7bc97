import { z } from 'zod';

/** Request bodies of the sign-up routes, shared by the routes and the management client. */

export const password = z.string().min(8).max(128);

export const signupBody = z.strictObject({
  email: z.email(),
  password,
  name: z.string().min(1).max(128),
  workspaceName: z.string().min(1).max(64).optional(),
});

export const signupOrgBody = signupBody.extend({ orgName: z.string().trim().min(1).max(128), teamName: z.string().trim().min(1).max(128).default('Default') });
