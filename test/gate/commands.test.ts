import t from 'tap';
import { classify, commandOf, isDeploy, isTest, matchesPhrase, performsAction, touchesInfra } from '../../src/gate/commands.js';

t.test('a phrase matches whatever separates its words', async (t) => {
  const force = 'git push --force';
  for (const command of [
    'git push --force origin main',
    'git\tpush\t--force',
    'git push \\\n  --force origin main',
    'git push origin main --force',
    'git -C repo push -u origin --force',
    'cd repo && git push --force # the usual',
    'echo hi; /usr/bin/git push "--force"',
    'sudo -E git push --force',
    'GIT_TRACE=1 git push --force',
    'GIT PUSH --FORCE',
  ]) {
    t.ok(matchesPhrase(command, force), JSON.stringify(command));
  }
  for (const command of ['git push --force-with-lease', 'git push origin main', 'echo git push --force', 'git status # git push --force', 'git fetch && push --force', 'git push\n--force']) {
    t.notOk(matchesPhrase(command, force), JSON.stringify(command));
  }
});

t.test('actions: deploy, publish, release, db_write', async (t) => {
  t.ok(performsAction('kubectl apply -f k8s/api.yaml', 'deploy'));
  t.ok(performsAction('helm upgrade --install api ./chart', 'deploy'));
  t.ok(performsAction('npm publish --access public', 'publish'));
  t.ok(performsAction('gh release create v1.2.0', 'release'));
  t.ok(performsAction(`psql "$DATABASE_URL" -c "DELETE FROM users WHERE id = 4"`, 'db_write'));
  t.ok(performsAction('npx --yes prisma migrate deploy', 'db_write'), 'npx runs prisma: prisma is the program');
  t.ok(performsAction('prisma migrate deploy', 'db_write'));
  t.notOk(performsAction(`psql -c "SELECT count(*) FROM users"`, 'db_write'), 'a read is not a write');
  t.notOk(performsAction('kubectl get pods', 'deploy'));
});

t.test('the classifier', async (t) => {
  t.ok(isDeploy('terraform apply -auto-approve'));
  t.ok(isTest('npm test'));
  t.ok(isTest('npx jest --ci'));
  t.ok(isTest('python -m pytest -q tests/'));
  t.notOk(isTest('npm install'));
  t.ok(touchesInfra('aws s3 ls'));
  t.notOk(touchesInfra('ls -la'));
  t.same(classify('docker push ghcr.io/acme/api:1.2'), ['publish', 'infra']);
  t.same(classify('ls'), []);
});

t.test('the command a tool call runs', async (t) => {
  t.equal(commandOf({ command: 'ls' }), 'ls');
  t.equal(commandOf({ cmd: ['git', 'status'] }), 'git status');
  t.equal(commandOf('echo hi'), 'echo hi');
  t.equal(commandOf({ path: 'x' }), null);
  t.equal(commandOf(null), null);
});
