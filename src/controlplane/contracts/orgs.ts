import { z } from 'zod';

/** Request bodies of the org and team routes, shared by the routes and the management client. */

const name = z.string().trim().min(1).max(128);
export const createOrgBody = z.strictObject({ name });
export const createTeamBody = z.strictObject({ name });
export const createWorkspaceBody = z.strictObject({ name: z.string().trim().min(1).max(64) });
