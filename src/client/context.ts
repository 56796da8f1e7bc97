import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { z } from 'zod';
import { localConfigSchema } from '../machine/local-config.js';
import { svcHome } from '../lib/paths.js';

/**
 * Where a client runs: the git branch, the pull request and the CI run (GitHub Actions, GitLab CI,
 * Buildkite, CircleCI, Jenkins, or any CI that sets `CI`), and the machine's `~/.svc/config.json`
 * (`$SVC_HOME/config.json`) that the sync daemon keeps.
 */

export type CiProvider = 'github-actions' | 'gitlab-ci' | 'buildkite' | 'circleci' | 'jenkins' | 'generic';

export interface CiContext {
  readonly provider: CiProvider;
  /** The run (workflow run, pipeline, build) id. */
  readonly runId: string | null;
  readonly runUrl: string | null;
}

/**
 * `~/.svc/config.json` (seed 002 "Local files"): the machine's local spending cap and whether the
 * hook gate keeps pre-images for `svc rollback`, read with the command-line tool's own schema.
 */
export const svcConfigSchema = localConfigSchema;
export type SvcConfig = z.infer<typeof localConfigSchema>;

/** How reading the config file went; an unusable file is ignored, and `reason` says why. */
export type SvcConfigFile =
  | { readonly path: string; readonly status: 'loaded'; readonly values: SvcConfig }
  | { readonly path: string; readonly status: 'absent' }
  | { readonly path: string; readonly status: 'ignored'; readonly reason: string };

export interface RunContext {
  readonly branch: string | null;
  readonly commit: string | null;
  /** The pull (merge) request number, when the run is for one. */
  readonly pullRequest: string | null;
  /** `owner/name`, or the repository URL when that is all the CI gives. */
  readonly repository: string | null;
  readonly ci: CiContext | null;
  readonly config: SvcConfigFile;
}

export interface ResolveContextOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Where the git checkout is looked for (walking up), when no CI variable names the branch. */
  readonly cwd?: string;
}

/** A file larger than this is not a settings file. */
const MAX_CONFIG_BYTES = 64 * 1024;

export function svcConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(svcHome(env), 'config.json');
}

/** `~/.svc/config.json`, validated; never throws. */
export function readSvcConfig(env: NodeJS.ProcessEnv = process.env): SvcConfigFile {
  const path = svcConfigPath(env);
  let text: string;
  try {
    if (statSync(path).size > MAX_CONFIG_BYTES) return { path, status: 'ignored', reason: `${path} is larger than ${MAX_CONFIG_BYTES} bytes` };
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { path, status: 'absent' };
    return { path, status: 'ignored', reason: `${path} cannot be read: ${(err as Error).message}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { path, status: 'ignored', reason: `${path} is not valid JSON: ${(err as Error).message}` };
  }
  const parsed = svcConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(top level)'}: ${i.message}`).join('; ');
    return { path, status: 'ignored', reason: `${path} does not hold a valid svc config: ${issues}` };
  }
  return { path, status: 'loaded', values: parsed.data };
}

const set = (v: string | undefined): string | null => (v === undefined || v.trim() === '' ? null : v.trim());
const isTrue = (v: string | undefined) => v !== undefined && ['1', 'true', 'yes'].includes(v.trim().toLowerCase());

/** `origin/main` → `main`; `refs/heads/main` → `main`. */
function shortBranch(ref: string | null): string | null {
  if (ref === null) return null;
  return ref.replace(/^refs\/heads\//, '').replace(/^origin\//, '') || null;
}

/** The number at the end of a pull request URL or ref (`…/pull/42`, `refs/pull/42/merge`). */
function prNumber(v: string | null): string | null {
  if (v === null || v === 'false') return null;
  const m = /(?:^|\/)(\d+)(?:\/(?:merge|head))?\/?$/.exec(v);
  return m === null ? null : m[1]!;
}

interface CiReading {
  readonly ci: CiContext;
  readonly branch: string | null;
  readonly commit: string | null;
  readonly pullRequest: string | null;
  readonly repository: string | null;
}

function githubActions(env: NodeJS.ProcessEnv): CiReading {
  const repo = set(env.GITHUB_REPOSITORY);
  const runId = set(env.GITHUB_RUN_ID);
  const server = set(env.GITHUB_SERVER_URL) ?? 'https://github.com';
  const isPr = /^pull_request/.test(env.GITHUB_EVENT_NAME ?? '');
  return {
    ci: { provider: 'github-actions', runId, runUrl: repo !== null && runId !== null ? `${server}/${repo}/actions/runs/${runId}` : null },
    // On a pull request GITHUB_REF_NAME is `42/merge`; the branch is the head ref.
    branch: set(env.GITHUB_HEAD_REF) ?? (env.GITHUB_REF_TYPE === 'tag' || isPr ? null : set(env.GITHUB_REF_NAME)),
    commit: set(env.GITHUB_SHA),
    pullRequest: isPr ? prNumber(set(env.GITHUB_REF)) : null,
    repository: repo,
  };
}

function gitlab(env: NodeJS.ProcessEnv): CiReading {
  return {
    ci: { provider: 'gitlab-ci', runId: set(env.CI_PIPELINE_ID), runUrl: set(env.CI_PIPELINE_URL) ?? set(env.CI_JOB_URL) },
    branch: set(env.CI_MERGE_REQUEST_SOURCE_BRANCH_NAME) ?? set(env.CI_COMMIT_BRANCH) ?? (set(env.CI_COMMIT_TAG) === null ? set(env.CI_COMMIT_REF_NAME) : null),
    commit: set(env.CI_COMMIT_SHA),
    pullRequest: set(env.CI_MERGE_REQUEST_IID),
    repository: set(env.CI_PROJECT_PATH),
  };
}

function buildkite(env: NodeJS.ProcessEnv): CiReading {
  return {
    ci: { provider: 'buildkite', runId: set(env.BUILDKITE_BUILD_ID) ?? set(env.BUILDKITE_BUILD_NUMBER), runUrl: set(env.BUILDKITE_BUILD_URL) },
    branch: set(env.BUILDKITE_BRANCH),
    commit: set(env.BUILDKITE_COMMIT),
    pullRequest: prNumber(set(env.BUILDKITE_PULL_REQUEST)),
    repository: set(env.BUILDKITE_REPO),
  };
}

function circleci(env: NodeJS.ProcessEnv): CiReading {
  const user = set(env.CIRCLE_PROJECT_USERNAME);
  const name = set(env.CIRCLE_PROJECT_REPONAME);
  return {
    ci: { provider: 'circleci', runId: set(env.CIRCLE_WORKFLOW_ID) ?? set(env.CIRCLE_BUILD_NUM), runUrl: set(env.CIRCLE_BUILD_URL) },
    branch: set(env.CIRCLE_BRANCH),
    commit: set(env.CIRCLE_SHA1),
    pullRequest: set(env.CIRCLE_PR_NUMBER) ?? prNumber(set(env.CIRCLE_PULL_REQUEST)),
    repository: user !== null && name !== null ? `${user}/${name}` : set(env.CIRCLE_REPOSITORY_URL),
  };
}

/** Jenkins, and the same generic names (BRANCH_NAME, GIT_BRANCH, GIT_COMMIT, CHANGE_ID) other CIs set too. */
function jenkinsStyle(env: NodeJS.ProcessEnv, provider: 'jenkins' | 'generic'): CiReading {
  const pullRequest = set(env.CHANGE_ID) ?? set(env.PULL_REQUEST_NUMBER) ?? set(env.PR_NUMBER);
  return {
    ci: { provider, runId: set(env.BUILD_TAG) ?? set(env.BUILD_ID) ?? set(env.BUILD_NUMBER), runUrl: set(env.BUILD_URL) },
    // On a Jenkins change request BRANCH_NAME is `PR-42`; CHANGE_BRANCH is the source branch.
    branch: set(env.CHANGE_BRANCH) ?? (pullRequest === null ? set(env.BRANCH_NAME) : null) ?? shortBranch(set(env.GIT_BRANCH)),
    commit: set(env.GIT_COMMIT) ?? set(env.COMMIT_SHA),
    pullRequest,
    repository: set(env.GIT_URL) ?? set(env.REPOSITORY_URL),
  };
}

function readCi(env: NodeJS.ProcessEnv): CiReading | null {
  if (isTrue(env.GITHUB_ACTIONS)) return githubActions(env);
  if (isTrue(env.GITLAB_CI)) return gitlab(env);
  if (isTrue(env.BUILDKITE)) return buildkite(env);
  if (isTrue(env.CIRCLECI)) return circleci(env);
  if (set(env.JENKINS_URL) !== null || set(env.JENKINS_HOME) !== null) return jenkinsStyle(env, 'jenkins');
  if (isTrue(env.CI)) return jenkinsStyle(env, 'generic');
  return null;
}

/** The checkout's HEAD, found by walking up from `cwd` (a worktree's `.git` file is followed). */
function readGitHead(cwd: string): { branch: string | null; commit: string | null } | null {
  let dir = resolve(cwd);
  for (;;) {
    const dotGit = join(dir, '.git');
    try {
      let gitDir = dotGit;
      if (statSync(dotGit).isFile()) {
        const pointer = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim();
        if (pointer === undefined) return null;
        gitDir = isAbsolute(pointer) ? pointer : resolve(dir, pointer);
      }
      const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
      const ref = /^ref:\s*(.+)$/.exec(head)?.[1];
      if (ref !== undefined) return { branch: shortBranch(ref), commit: null };
      return /^[0-9a-f]{40,64}$/.test(head) ? { branch: null, commit: head } : null;
    } catch {
      // No checkout here (or an unreadable one): look further up.
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** The run's context: CI variables first, then the git checkout for what they leave out. */
export function resolveContext(opts: ResolveContextOptions = {}): RunContext {
  const env = opts.env ?? process.env;
  const ci = readCi(env);
  const git = ci?.branch != null ? null : readGitHead(opts.cwd ?? process.cwd());
  return {
    branch: ci?.branch ?? git?.branch ?? null,
    commit: ci?.commit ?? git?.commit ?? null,
    pullRequest: ci?.pullRequest ?? null,
    repository: ci?.repository ?? null,
    ci: ci?.ci ?? null,
    config: readSvcConfig(env),
  };
}
