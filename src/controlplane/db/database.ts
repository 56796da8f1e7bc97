import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { migrate } from './migrations.js';

/** What a query runs on: the database itself or one transaction. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

/** Whether a query failed on a unique constraint (SQLSTATE 23505), as two concurrent writes of one name can. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}

/** The control plane's SQL storage: the same statements on PGlite and on PostgreSQL. */
export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

async function openPglite(dataDir: string): Promise<Database> {
  await mkdir(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir);
  const asQueryable = (q: Pick<PGlite, 'query'>): Queryable => ({
    query: async <Row>(sql: string, params?: readonly unknown[]) => (await q.query<Row>(sql, params as unknown[] | undefined)).rows,
  });
  return {
    kind: 'pglite',
    ...asQueryable(db),
    transaction: (fn) => db.transaction((tx) => fn(asQueryable(tx))),
    close: () => db.close(),
  };
}

async function openPostgres(connectionString: string, schema: string | undefined): Promise<Database> {
  const pool = new pg.Pool({ connectionString, max: 8, ...(schema ? { options: `-c search_path=${schema}` } : {}) });
  const asQueryable = (q: pg.Pool | pg.PoolClient): Queryable => ({
    query: async <Row>(sql: string, params?: readonly unknown[]) => (await q.query(sql, params as unknown[] | undefined)).rows as Row[],
  });
  return {
    kind: 'postgres',
    ...asQueryable(pool),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(asQueryable(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

export interface DatabaseOptions {
  /** PostgreSQL connection string; when absent the embedded PGlite database under `dataDir` is used. */
  databaseUrl?: string | undefined;
  /** PostgreSQL schema to work in (created if missing); the connection's default otherwise. */
  schema?: string | undefined;
  dataDir: string;
}

/** Opens the storage and brings its schema up to date. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(options.schema)) throw new Error(`invalid schema name '${options.schema}'`);
  if (options.databaseUrl !== undefined && options.schema !== undefined) {
    const admin = new pg.Client({ connectionString: options.databaseUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${options.schema}`);
    } finally {
      await admin.end();
    }
  }
  const db = options.databaseUrl !== undefined ? await openPostgres(options.databaseUrl, options.schema) : await openPglite(options.dataDir);
  await migrate(db);
  return db;
}
