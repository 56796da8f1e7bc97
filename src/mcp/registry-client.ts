import { ControlPlaneApi, ControlPlaneHttpError } from '../config/control-plane-api.js';
import type { Logger } from '../lib/logger.js';
import type { McpServerView } from '../policy/mcp-registry.js';
import type { PinnedTool } from '../policy/mcp-tool-changes.js';

/** What the registry says of the server a call is for: its view, not registered (null), or nothing known because the control plane cannot be reached. */
export type RegistryAnswer = McpServerView | null | 'unreachable';

/** The MCP server registry as one wrapped server sees it. */
export interface ServerRegistry {
  /** The registry's word for judging a call now; waits for a tool set being reported. */
  view(): Promise<RegistryAnswer>;
  /** Reports the tool set the server lists (compared with its pin by the registry); calls wait for the answer. Null: the listing failed, nothing to report. */
  observe(tools: Promise<readonly PinnedTool[] | null>): void;
}

/** A registry with no control plane: what the config file (or the last synced config) says, never changing. */
export class ConfiguredRegistry implements ServerRegistry {
  constructor(private readonly configured: McpServerView | undefined) {}

  async view(): Promise<RegistryAnswer> {
    return this.configured ?? null;
  }

  observe(): void {}
}

interface EntryAnswer {
  readonly status: McpServerView['status'];
  readonly disabledTools: readonly string[];
  readonly lastChange?: { readonly risk: string; readonly findings: ReadonlyArray<{ readonly tool: string; readonly detail: string; readonly highRisk: boolean }> } | null;
}

/** Statuses under which calls run: looked up again only once the cached word is older than the refresh interval. */
const RUNNING = new Set(['approved', 'unreviewed']);

/**
 * The control plane's registry (`/api/v1/mcp/servers/:name`). Tool sets are reported with
 * `observe`; the server's status is cached and looked up again after `refreshMs` while its calls
 * run (so a block or a switched-off tool reaches a running wrapper within that interval), and
 * on every call while they are refused (so an approval takes effect on the next call). When the
 * control plane cannot be reached, the last word it gave (or the synced config's) stands; with
 * none, the answer is `unreachable` and mcpProxyFailBehavior decides.
 */
export class ControlPlaneRegistry implements ServerRegistry {
  private cached: { view: McpServerView | null; at: number } | null;
  private reporting: Promise<void> = Promise.resolve();
  /** A tool set the registry has not heard of yet (its report failed): tried again on the next call, and until it lands the pin check cannot finish. */
  private unreported: readonly PinnedTool[] | null = null;
  private readonly path: string;

  constructor(
    private readonly server: string,
    private readonly api: ControlPlaneApi,
    private readonly logger: Logger,
    /** What the synced config said, used until the control plane answers. */
    synced: McpServerView | undefined,
    private readonly refreshMs = 10_000,
    private readonly clock: () => number = Date.now,
  ) {
    this.cached = synced === undefined ? null : { view: synced, at: -Infinity };
    this.path = `/mcp/servers/${encodeURIComponent(server)}`;
  }

  async view(): Promise<RegistryAnswer> {
    await this.reporting;
    if (this.unreported !== null) {
      this.observe(Promise.resolve(this.unreported));
      await this.reporting;
      if (this.unreported !== null) return 'unreachable';
    }
    const cached = this.cached;
    if (cached !== null && cached.view !== null && RUNNING.has(cached.view.status) && this.clock() - cached.at < this.refreshMs) return cached.view;
    try {
      const entry = await this.api.json<EntryAnswer>('GET', this.path);
      return this.remember(entry);
    } catch (err) {
      if (err instanceof ControlPlaneHttpError && err.status === 404) {
        this.cached = { view: null, at: this.clock() };
        return null;
      }
      this.logger.warn({ server: this.server, err: (err as Error).message }, 'the MCP server registry could not be reached');
      return cached === null ? 'unreachable' : cached.view;
    }
  }

  observe(listing: Promise<readonly PinnedTool[] | null>): void {
    this.reporting = this.reporting.then(async () => {
      const tools = await listing;
      if (tools === null) return;
      try {
        const entry = await this.api.json<EntryAnswer>('POST', `${this.path}/observe`, { tools });
        this.unreported = null;
        this.remember(entry);
        const change = entry.lastChange;
        if (entry.status === 'held' && change) {
          this.logger.warn({ server: this.server, findings: change.findings.filter((f) => f.highRisk) }, 'the MCP server changed its tools in a way scored high risk: held until approved');
        }
      } catch (err) {
        this.unreported = tools;
        this.logger.warn({ server: this.server, err: (err as Error).message }, 'the MCP server\'s tool set could not be reported to the registry');
      }
    });
  }

  private remember(entry: EntryAnswer): McpServerView {
    const view: McpServerView = { status: entry.status, disabledTools: entry.disabledTools };
    this.cached = { view, at: this.clock() };
    return view;
  }
}
