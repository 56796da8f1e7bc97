import t from 'tap';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSvcConfig, resolveContext, SvcClient } from '../../src/client/index.js';

async function tempDir(t: Tap.Test, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A folder with no checkout above it that matters: the git fallback finds nothing there. */
let empty: string;
t.before(async () => {
  empty = await mkdtemp(join(tmpdir(), 'svc-ctx-empty-'));
});
t.teardown(() => rm(empty, { recursive: true, force: true }));

const SHA = 'a'.repeat(40);

t.test('GitHub Actions: a push and a pull request', async (t) => {
  const base = { GITHUB_ACTIONS: 'true', GITHUB_SHA: SHA, GITHUB_REPOSITORY: 'acme/app', GITHUB_RUN_ID: '123', GITHUB_SERVER_URL: 'https://github.example' };
  t.match(resolveContext({ env: { ...base, GITHUB_EVENT_NAME: 'push', GITHUB_REF: 'refs/heads/main', GITHUB_REF_NAME: 'main', GITHUB_REF_TYPE: 'branch' }, cwd: empty }), {
    branch: 'main',
    commit: SHA,
    pullRequest: null,
    repository: 'acme/app',
    ci: { provider: 'github-actions', runId: '123', runUrl: 'https://github.example/acme/app/actions/runs/123' },
  });
  t.match(resolveContext({ env: { ...base, GITHUB_EVENT_NAME: 'pull_request', GITHUB_REF: 'refs/pull/42/merge', GITHUB_REF_NAME: '42/merge', GITHUB_HEAD_REF: 'feature/login' }, cwd: empty }), {
    branch: 'feature/login',
    pullRequest: '42',
  });
  t.match(resolveContext({ env: { ...base, GITHUB_EVENT_NAME: 'push', GITHUB_REF_NAME: 'v1.2.0', GITHUB_REF_TYPE: 'tag' }, cwd: empty }), { branch: null, pullRequest: null }, 'a tag is no branch');
});

t.test('GitLab CI: a merge request pipeline and a branch pipeline', async (t) => {
  const base = { GITLAB_CI: 'true', CI: 'true', CI_COMMIT_SHA: SHA, CI_PROJECT_PATH: 'group/app', CI_PIPELINE_ID: '77', CI_PIPELINE_URL: 'https://gitlab.example/group/app/-/pipelines/77' };
  t.match(resolveContext({ env: { ...base, CI_MERGE_REQUEST_IID: '9', CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'fix/bug', CI_COMMIT_REF_NAME: 'fix/bug' }, cwd: empty }), {
    branch: 'fix/bug',
    pullRequest: '9',
    repository: 'group/app',
    ci: { provider: 'gitlab-ci', runId: '77', runUrl: 'https://gitlab.example/group/app/-/pipelines/77' },
  });
  t.match(resolveContext({ env: { ...base, CI_COMMIT_BRANCH: 'develop', CI_COMMIT_REF_NAME: 'develop' }, cwd: empty }), { branch: 'develop', pullRequest: null });
});

t.test('Buildkite, CircleCI, Jenkins and a generic CI', async (t) => {
  t.match(resolveContext({ env: { BUILDKITE: 'true', BUILDKITE_BRANCH: 'main', BUILDKITE_COMMIT: SHA, BUILDKITE_PULL_REQUEST: 'false', BUILDKITE_BUILD_ID: 'b-1', BUILDKITE_BUILD_URL: 'https://bk.example/b/1', BUILDKITE_REPO: 'git@github.com:acme/app.git' }, cwd: empty }), {
    branch: 'main',
    commit: SHA,
    pullRequest: null,
    repository: 'git@github.com:acme/app.git',
    ci: { provider: 'buildkite', runId: 'b-1', runUrl: 'https://bk.example/b/1' },
  });
  t.match(resolveContext({ env: { BUILDKITE: 'true', BUILDKITE_BRANCH: 'topic', BUILDKITE_PULL_REQUEST: '13' }, cwd: empty }), { pullRequest: '13' });
  t.match(resolveContext({ env: { CIRCLECI: 'true', CIRCLE_BRANCH: 'feat', CIRCLE_SHA1: SHA, CIRCLE_PULL_REQUEST: 'https://github.com/acme/app/pull/99', CIRCLE_PROJECT_USERNAME: 'acme', CIRCLE_PROJECT_REPONAME: 'app', CIRCLE_WORKFLOW_ID: 'wf', CIRCLE_BUILD_URL: 'https://circle.example/1' }, cwd: empty }), {
    branch: 'feat',
    pullRequest: '99',
    repository: 'acme/app',
    ci: { provider: 'circleci', runId: 'wf', runUrl: 'https://circle.example/1' },
  });
  t.match(resolveContext({ env: { JENKINS_URL: 'https://ci.example/', BRANCH_NAME: 'PR-5', CHANGE_ID: '5', CHANGE_BRANCH: 'feature/x', GIT_COMMIT: SHA, BUILD_TAG: 'jenkins-app-PR-5-3', BUILD_URL: 'https://ci.example/job/3/' }, cwd: empty }), {
    branch: 'feature/x',
    pullRequest: '5',
    commit: SHA,
    ci: { provider: 'jenkins', runId: 'jenkins-app-PR-5-3', runUrl: 'https://ci.example/job/3/' },
  });
  t.match(resolveContext({ env: { JENKINS_HOME: '/var/jenkins', GIT_BRANCH: 'origin/release/2.0' }, cwd: empty }), { branch: 'release/2.0', pullRequest: null, ci: { provider: 'jenkins' } });
  t.match(resolveContext({ env: { CI: 'true', BRANCH_NAME: 'main', GIT_COMMIT: SHA }, cwd: empty }), { branch: 'main', commit: SHA, ci: { provider: 'generic', runId: null } });
  t.match(resolveContext({ env: { CI: 'false' }, cwd: empty }), { ci: null }, 'CI=false is no CI');
});

t.test('outside CI the branch comes from the git checkout, found from a nested folder, through a worktree pointer too', async (t) => {
  const repo = await tempDir(t, 'svc-ctx-git-');
  await mkdir(join(repo, '.git'), { recursive: true });
  await writeFile(join(repo, '.git', 'HEAD'), 'ref: refs/heads/topic/abc\n');
  await mkdir(join(repo, 'src', 'deep'), { recursive: true });
  t.match(resolveContext({ env: {}, cwd: join(repo, 'src', 'deep') }), { branch: 'topic/abc', commit: null, ci: null, pullRequest: null });

  await writeFile(join(repo, '.git', 'HEAD'), `${SHA}\n`);
  t.match(resolveContext({ env: {}, cwd: repo }), { branch: null, commit: SHA }, 'a detached HEAD names its commit');

  const worktree = await tempDir(t, 'svc-ctx-wt-');
  const gitdir = join(repo, '.git', 'worktrees', 'wt');
  await mkdir(gitdir, { recursive: true });
  await writeFile(join(gitdir, 'HEAD'), 'ref: refs/heads/wt-branch\n');
  await writeFile(join(worktree, '.git'), `gitdir: ${gitdir}\n`);
  t.match(resolveContext({ env: {}, cwd: worktree }), { branch: 'wt-branch' });

  t.match(resolveContext({ env: { CI: 'true', BRANCH_NAME: 'from-ci' }, cwd: repo }), { branch: 'from-ci' }, 'a CI variable wins over the checkout');
});

t.test('~/.svc/config.json under SVC_HOME: loaded, absent, or ignored with the reason', async (t) => {
  const home = await tempDir(t, 'svc-ctx-home-');
  const env = { SVC_HOME: home };
  t.match(readSvcConfig(env), { status: 'absent', path: join(home, 'config.json') });

  await writeFile(join(home, 'config.json'), JSON.stringify({ localCapUsd: 12.5 }));
  t.strictSame(readSvcConfig(env), { path: join(home, 'config.json'), status: 'loaded', values: { localCapUsd: 12.5, captureRollbackPreImages: false } });
  await writeFile(join(home, 'config.json'), '{}');
  t.match(readSvcConfig(env), { status: 'loaded', values: { localCapUsd: 10, captureRollbackPreImages: false } }, 'the seed defaults');

  await writeFile(join(home, 'config.json'), '{"localCapUsd": 5,');
  t.match(readSvcConfig(env), { status: 'ignored', reason: /config\.json is not valid JSON/ });

  await writeFile(join(home, 'config.json'), JSON.stringify({ localCapUsd: 'ten', captureRollbackPreImages: 'yes' }));
  t.match(readSvcConfig(env), { status: 'ignored', reason: /does not hold a valid svc config: localCapUsd: .*; captureRollbackPreImages: / });

  await writeFile(join(home, 'config.json'), JSON.stringify({ localCapUsd: 5, proxyUrl: 'http://x' }));
  t.match(readSvcConfig(env), { status: 'ignored', reason: /proxyUrl/ }, 'an unknown key: the file is not what svc writes');

  await writeFile(join(home, 'config.json'), '[1,2]');
  t.match(readSvcConfig(env), { status: 'ignored', reason: /\(top level\)/ });

  await writeFile(join(home, 'config.json'), ' '.repeat(70 * 1024));
  t.match(readSvcConfig(env), { status: 'ignored', reason: /larger than/ });

  await rm(join(home, 'config.json'));
  await mkdir(join(home, 'config.json'));
  t.match(readSvcConfig(env), { status: 'ignored', reason: /cannot be read/ }, 'a folder where the file should be');
});

t.test('the client exposes the context, and still works when the config file is broken', async (t) => {
  const home = await tempDir(t, 'svc-ctx-client-');
  await writeFile(join(home, 'config.json'), JSON.stringify({ localCapUsd: 3 }));
  const env = { SVC_HOME: home, GITHUB_ACTIONS: 'true', GITHUB_REF_NAME: 'main', GITHUB_EVENT_NAME: 'push' };
  const client = new SvcClient({ apiKey: 'vk_test', baseUrl: 'http://127.0.0.1:4555/v1/', env, cwd: empty });
  t.teardown(() => client.close());
  t.equal(client.baseUrl, 'http://127.0.0.1:4555', 'a trailing /v1 and slash are taken off');
  t.equal(client.controlPlaneUrl, 'http://127.0.0.1:3001', 'the local control plane by default');
  t.match(client.context, { branch: 'main', ci: { provider: 'github-actions' }, config: { status: 'loaded', values: { localCapUsd: 3 } } });

  const fromEnv = new SvcClient({ apiKey: 'vk_test', env: { SVC_HOME: home, SVC_CONTROL_PLANE_URL: 'http://127.0.0.1:3777/' }, cwd: empty });
  t.teardown(() => fromEnv.close());
  t.equal(fromEnv.baseUrl, 'http://127.0.0.1:4000', 'the local proxy by default');
  t.equal(fromEnv.controlPlaneUrl, 'http://127.0.0.1:3777', 'SVC_CONTROL_PLANE_URL');

  await writeFile(join(home, 'credentials.json'), JSON.stringify({ apiKey: 'vk_stored_key', controlPlaneUrl: 'https://cp.example' }));
  const stored = new SvcClient({ apiKey: 'vk_test', env: { SVC_HOME: home }, cwd: empty });
  t.teardown(() => stored.close());
  t.equal(stored.controlPlaneUrl, 'https://cp.example', 'the control plane svc login stored');
  const explicit = new SvcClient({ apiKey: 'vk_test', controlPlaneUrl: 'http://127.0.0.1:3001', env: { SVC_HOME: home, SVC_CONTROL_PLANE_URL: 'http://127.0.0.1:9' }, cwd: empty });
  t.teardown(() => explicit.close());
  t.equal(explicit.controlPlaneUrl, 'http://127.0.0.1:3001', 'the option wins');

  await writeFile(join(home, 'config.json'), 'not json at all');
  const despite = new SvcClient({ apiKey: 'vk_test', env: { SVC_HOME: home }, cwd: empty });
  t.teardown(() => despite.close());
  t.match(despite.context.config, { status: 'ignored', reason: /not valid JSON/ });

  t.throws(() => new SvcClient({ apiKey: '', env: { SVC_HOME: home } }), { code: 'invalid_options', message: /apiKey/ });
  t.throws(() => new SvcClient({ apiKey: 'vk_x', baseUrl: 'not a url', env: { SVC_HOME: home } }), { code: 'invalid_options', message: /baseUrl/ });
});
