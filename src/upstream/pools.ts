import { Pool } from 'undici';

export interface PoolOptions {
  connections: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
}

/** One keep-alive undici Pool per upstream origin. */
export class PoolRegistry {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly options: PoolOptions) {}

  get(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (pool === undefined) {
      pool = new Pool(origin, {
        connections: this.options.connections,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 600_000,
        headersTimeout: this.options.headersTimeoutMs,
        bodyTimeout: this.options.bodyTimeoutMs,
      });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  async close(): Promise<void> {
    const all = [...this.pools.values()];
    this.pools.clear();
    await Promise.allSettled(all.map((p) => p.destroy()));
  }
}
