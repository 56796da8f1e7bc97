/**
 * Reading shell commands the way the gate's rules do: a phrase such as `git push --force` matches
 * whatever separates its words — tabs, line continuations, quotes, flags in between, inline
 * comments after — within one simple command of a pipeline or list. And the command classifier
 * (deploy, test, infrastructure, publish, release, database write) the image tier and action rules use.
 */

/** Words that run the next word as the command. */
const PREFIXES = new Set(['sudo', 'doas', 'env', 'command', 'exec', 'nohup', 'time', 'nice', 'ionice', 'xargs', 'then', 'do', 'else', '!', 'npx', 'bunx', 'pnpx']);

/** The simple commands of a command line, each as its words (program first, path stripped). */
export function simpleCommands(command: string): string[][] {
  const joined = command.replace(/\\\r?\n/g, ' ');
  const out: string[][] = [];
  for (const segment of joined.split(/&&|\|\||[;|&\n()`]|\$\(/)) {
    const words: string[] = [];
    for (const raw of segment.trim().split(/\s+/)) {
      if (raw.startsWith('#')) break;
      const word = raw.replace(/["'{}]/g, '');
      if (word !== '') words.push(word);
    }
    // `sudo -E git …`, `env A=1 git …`: the command is the first word that is none of these (nor a prefix's flag).
    let prefixed = false;
    while (words.length > 0 && (PREFIXES.has(words[0]!) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!) || (prefixed && words[0]!.startsWith('-')))) {
      prefixed ||= PREFIXES.has(words[0]!);
      words.shift();
    }
    if (words.length === 0) continue;
    words[0] = words[0]!.slice(words[0]!.lastIndexOf('/') + 1);
    out.push(words);
  }
  return out;
}

/**
 * Whether `phrase` (words separated by spaces; the first is the program) occurs in `command`:
 * in one simple command, the program first and the other words in order, anything between them.
 * Words compare case-insensitively; `--force` does not match `--force-with-lease`.
 */
export function matchesPhrase(command: string, phrase: string): boolean {
  const wanted = phrase.trim().toLowerCase().split(/\s+/);
  if (wanted.length === 0 || wanted[0] === '') return false;
  return simpleCommands(command).some((words) => {
    if (words[0]!.toLowerCase() !== wanted[0]) return false;
    let at = 1;
    for (let i = 1; i < words.length && at < wanted.length; i++) if (words[i]!.toLowerCase() === wanted[at]) at++;
    return at === wanted.length;
  });
}

export const ACTIONS = ['deploy', 'publish', 'release', 'db_write'] as const;
export type Action = (typeof ACTIONS)[number];

export const ACTION_PHRASES: Readonly<Record<Action, readonly string[]>> = {
  deploy: [
    'kubectl apply', 'kubectl create', 'kubectl replace', 'kubectl set image', 'kubectl rollout restart', 'helm install', 'helm upgrade', 'terraform apply',
    'pulumi up', 'cdk deploy', 'serverless deploy', 'sls deploy', 'fly deploy', 'flyctl deploy', 'vercel deploy', 'vercel --prod', 'netlify deploy', 'gcloud run deploy',
    'gcloud app deploy', 'gcloud functions deploy', 'aws ecs update-service', 'aws lambda update-function-code', 'aws cloudformation deploy', 'az webapp deploy',
    'az containerapp update', 'docker compose up', 'docker-compose up', 'docker stack deploy', 'docker service update', 'skaffold run', 'skaffold deploy', 'railway up',
    'heroku container:release', 'kamal deploy', 'argocd app sync', 'nomad job run',
  ],
  publish: ['npm publish', 'pnpm publish', 'yarn publish', 'yarn npm publish', 'cargo publish', 'twine upload', 'poetry publish', 'gem push', 'docker push', 'mvn deploy', 'gradle publish', 'dotnet nuget push', 'flit publish', 'uv publish'],
  release: ['gh release create', 'goreleaser release', 'semantic-release', 'changeset publish', 'npm version', 'release-it', 'lerna publish', 'git tag'],
  db_write: [
    'prisma migrate deploy', 'prisma db push', 'rails db:migrate', 'rake db:migrate', 'alembic upgrade', 'knex migrate:latest', 'sequelize db:migrate', 'flyway migrate',
    'liquibase update', 'django-admin migrate', 'manage.py migrate', 'diesel migration run', 'goose up', 'migrate up', 'dbmate up',
  ],
};

const DB_CLIENTS = new Set(['psql', 'mysql', 'mariadb', 'sqlite3', 'sqlcmd', 'clickhouse-client', 'cqlsh', 'mongo', 'mongosh', 'redis-cli', 'bq', 'snowsql', 'duckdb']);
const SQL_WRITE = /\b(?:insert|update|delete|drop|alter|truncate|create|grant|revoke|merge|replace)\b|\b(?:del|flushall|flushdb|set|hset|lpush|rpush|sadd|zadd|expire)\b|\.(?:insert|update|delete|drop|remove|replace)[A-Za-z]*\(/i;

/** Whether the command performs the action (seed 002 rule 5: action:deploy, publish, release, db_write). */
export function performsAction(command: string, action: Action): boolean {
  if (ACTION_PHRASES[action].some((p) => matchesPhrase(command, p))) return true;
  if (action !== 'db_write') return false;
  // A database client given a statement that writes (the statement's text may sit in quotes or a heredoc).
  return simpleCommands(command).some((words) => DB_CLIENTS.has(words[0]!)) && SQL_WRITE.test(command);
}

const TEST_PHRASES = [
  'npm test', 'npm run test', 'pnpm test', 'pnpm run test', 'yarn test', 'bun test', 'jest', 'vitest', 'mocha', 'tap', 'pytest',
  'python -m pytest', 'tox', 'nox', 'go test', 'cargo test', 'cargo nextest', 'mvn test', 'mvn verify', 'gradle test', './gradlew test', 'dotnet test', 'rspec', 'bundle exec rspec',
  'rake test', 'phpunit', 'mix test', 'swift test', 'ctest', 'make test', 'make check', 'deno test', 'playwright test', 'cypress run',
];
const INFRA_PROGRAMS = new Set(['terraform', 'tofu', 'kubectl', 'helm', 'pulumi', 'ansible', 'ansible-playbook', 'cdk', 'aws', 'gcloud', 'az', 'docker', 'docker-compose', 'podman', 'kustomize', 'skaffold', 'nomad', 'vault', 'consul', 'packer', 'eksctl', 'doctl', 'flyctl', 'fly', 'kamal']);

export function isDeploy(command: string): boolean {
  return performsAction(command, 'deploy');
}

export function isTest(command: string): boolean {
  return TEST_PHRASES.some((p) => matchesPhrase(command, p));
}

export function touchesInfra(command: string): boolean {
  return simpleCommands(command).some((words) => INFRA_PROGRAMS.has(words[0]!.toLowerCase()));
}

export type CommandClass = Action | 'test' | 'infra';

/** Every class the command falls in (none: an ordinary command). */
export function classify(command: string): CommandClass[] {
  const classes: CommandClass[] = ACTIONS.filter((a) => performsAction(command, a));
  if (isTest(command)) classes.push('test');
  if (touchesInfra(command)) classes.push('infra');
  return classes;
}

/** The shell command a tool call runs, if it runs one: a `command` (or `cmd`, `script`) string in its input, or a string input itself. */
export function commandOf(input: unknown): string | null {
  if (typeof input === 'string') return input;
  if (typeof input !== 'object' || input === null) return null;
  const o = input as Record<string, unknown>;
  for (const key of ['command', 'cmd', 'script']) {
    const v = o[key];
    if (typeof v === 'string') return v;
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return (v as string[]).join(' ');
  }
  return null;
}
