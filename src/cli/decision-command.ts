import type { Command } from 'commander';
import { z } from 'zod';
import { ControlPlaneApi, ControlPlaneHttpError } from '../config/control-plane-api.js';
import { describeZodError } from '../config/zod-error.js';
import { ConfigError } from '../lib/errors.js';

/**
 * `svc decision list | approve <holdId> | reject <holdId>`: the review queue of held tool calls,
 * against a control plane with a workspace key (`--control-plane-url` or SVC_CONTROL_PLANE_URL,
 * `--api-key` or SVC_API_KEY; a login token works as the key too). Exit 0 on success, 1 when the
 * control plane refuses (a role too low, your own hold, one already reviewed), 2 on bad options
 * or an unreachable control plane.
 */

const connection = z.object({
  controlPlaneUrl: z.url({ protocol: /^https?$/ }),
  apiKey: z.string().min(8).max(4096),
});

const listFlags = connection.extend({
  state: z.enum(['held', 'approved', 'rejected']).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  page: z.coerce.number().int().min(1).default(1),
  json: z.boolean().default(false),
});

const reviewFlags = connection.extend({
  holdId: z.string().regex(/^hold_[A-Za-z0-9]{1,60}$/, 'a hold id (hold_…)'),
  reason: z.string().min(1).max(1000).optional(),
  json: z.boolean().default(false),
});

function parse<T extends z.ZodType>(schema: T, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): z.infer<T> {
  const parsed = schema.safeParse({
    ...flags,
    controlPlaneUrl: flags.controlPlaneUrl ?? (env.SVC_CONTROL_PLANE_URL || undefined),
    apiKey: flags.apiKey ?? (env.SVC_API_KEY || undefined),
  });
  if (!parsed.success) throw new ConfigError(`invalid option: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

interface HoldView {
  id: string;
  state: string;
  tool: string;
  rule: string;
  reason: string | null;
  requesterMemberId: string;
  sessionId: string | null;
  createdAt: string;
  occurrences: number;
  arguments: unknown;
  review: null | { decision: string; reviewerMemberId: string; reason: string | null; at: string; bypassGranted: boolean; expiresAt: string | null; bypassActive: boolean };
}

/** The control plane's refusal as one line, and exit 1; anything else (unreachable) is exit 2. */
async function calling<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ControlPlaneHttpError) {
      process.stderr.write(`svc: the control plane refused: ${err.code}: ${err.reason}\n`);
      process.exit(1);
    }
    throw new ConfigError(`cannot reach the control plane: ${(err as Error).message}`);
  }
}

const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));

function describeReview(hold: HoldView): string {
  const review = hold.review;
  if (review === null) return hold.state;
  if (review.decision === 'rejected') return `rejected${review.reason ? `: ${review.reason}` : ''}`;
  if (!review.bypassGranted) return 'approved (recorded only: reviewHoldBypassEnabled was off)';
  return `approved; the identical call may run until ${review.expiresAt}${review.bypassActive ? '' : ' (no longer active)'}`;
}

async function list(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<void> {
  const opts = parse(listFlags, flags, env);
  const api = new ControlPlaneApi(opts);
  const query = new URLSearchParams({ page: String(opts.page), limit: String(opts.limit), ...(opts.state ? { state: opts.state } : {}) });
  const answer = await calling(() => api.json<{ decisions: HoldView[]; pagination: { total: number } }>('GET', `/decisions?${query}`));
  if (opts.json) {
    process.stdout.write(JSON.stringify(answer, null, 2) + '\n');
    return;
  }
  if (answer.decisions.length === 0) {
    process.stdout.write(`no holds${opts.state ? ` in state ${opts.state}` : ''}\n`);
    return;
  }
  const rows = answer.decisions.map((h) => [h.id, h.state, h.tool, h.rule, h.requesterMemberId, h.createdAt, JSON.stringify(h.arguments).slice(0, 80)]);
  const head = ['HOLD', 'STATE', 'TOOL', 'RULE', 'REQUESTER', 'CREATED', 'ARGUMENTS'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const row of [head, ...rows]) process.stdout.write(row.map((c, i) => (i === row.length - 1 ? c : pad(c, widths[i]!))).join('  ') + '\n');
  process.stdout.write(`${answer.decisions.length} of ${answer.pagination.total}\n`);
}

async function review(decision: 'approve' | 'reject', holdId: string, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<void> {
  const opts = parse(reviewFlags, { ...flags, holdId }, env);
  const api = new ControlPlaneApi(opts);
  const hold = await calling(() =>
    api.json<HoldView>('POST', `/decisions/${encodeURIComponent(opts.holdId)}/review`, { decision, ...(opts.reason === undefined ? {} : { reason: opts.reason }) }),
  );
  if (opts.json) process.stdout.write(JSON.stringify(hold, null, 2) + '\n');
  else process.stdout.write(`${hold.id} (${hold.tool}, rule ${hold.rule}): ${describeReview(hold)}\n`);
}

export function registerDecisionCommands(program: Command, fail: (err: unknown) => never): void {
  const decision = program.command('decision').description('review held tool calls on the control plane');
  const common = (cmd: Command) =>
    cmd
      .option('--control-plane-url <url>', 'the control plane (SVC_CONTROL_PLANE_URL)')
      .option('--api-key <key>', 'your workspace key, vk_… (SVC_API_KEY)')
      .option('--json', 'print the control plane\'s answer as JSON');
  common(decision.command('list').description('list holds, newest first'))
    .option('--state <state>', 'held, approved or rejected')
    .option('--limit <n>', 'holds per page, 1–100 (default 20)')
    .option('--page <n>', 'page (default 1)')
    .action((opts: Record<string, unknown>) => list(opts, process.env).catch(fail));
  for (const action of ['approve', 'reject'] as const) {
    common(decision.command(`${action} <holdId>`).description(`${action} a held tool call (OWNER, ADMIN or EM; not your own)`))
      .option('--reason <text>', 'why (1–1,000 characters)')
      .action((holdId: string, opts: Record<string, unknown>) => review(action, holdId, opts, process.env).catch(fail));
  }
}
