import type { Command } from 'commander';

type Register = (program: Command, fail: (err: unknown) => never) => void;

/**
 * Every command but the servers' (`proxy`, `controlplane`, which `program.ts` registers itself):
 * the top-level names each module registers, in the order `svc --help` lists them. `policy` has
 * two: the rule commands and the workspace policy's.
 */
export const COMMAND_MODULES: ReadonlyArray<{ readonly names: readonly string[]; readonly load: () => Promise<Register> }> = [
  { names: ['decide'], load: async () => (await import('./decide-command.js')).registerDecide },
  { names: ['policy'], load: async () => (await import('./policy-command.js')).registerPolicyCommands },
  { names: ['decision'], load: async () => (await import('./decision-command.js')).registerDecisionCommands },
  { names: ['mcp'], load: async () => (await import('./mcp-command.js')).registerMcpCommands },
  { names: ['gate', 'gates'], load: async () => (await import('./gate-command.js')).registerGateCommands },
  { names: ['login', 'logout', 'whoami', 'status'], load: async () => (await import('./login-command.js')).registerLoginCommands },
  { names: ['exec'], load: async () => (await import('./exec-command.js')).registerExecCommand },
  { names: ['connect', 'disconnect', 'inventory'], load: async () => (await import('./connect-command.js')).registerConnectCommands },
  { names: ['init'], load: async () => (await import('./init-command.js')).registerInitCommand },
  { names: ['daemon'], load: async () => (await import('./daemon-command.js')).registerDaemonCommands },
  { names: ['doctor'], load: async () => (await import('./doctor-command.js')).registerDoctorCommand },
  { names: ['setup'], load: async () => (await import('./setup-command.js')).registerSetupCommand },
  { names: ['traces', 'settings', 'credentials', 'policy'], load: async () => (await import('./admin-command.js')).registerAdminCommands },
  { names: ['budget'], load: async () => (await import('./budget-command.js')).registerBudgetCommand },
  { names: ['skill'], load: async () => (await import('./skill-command.js')).registerSkillCommands },
  { names: ['rollback'], load: async () => (await import('./rollback-command.js')).registerRollbackCommand },
];

const VERSION_FLAGS = new Set(['-V', '--version']);

/**
 * Registers the modules of `command` only, when it names one: a command's run then loads its own
 * modules, not every other command's (the DLP validators, the MCP SDK, the prompts), which took a
 * short command most of its start-up. `--version` needs none. Anything else (`--help`, `help`, an
 * unknown name) registers every command, so help and commander's suggestions see them all.
 */
export async function registerCommands(program: Command, fail: (err: unknown) => never, command: string | undefined): Promise<void> {
  if (command !== undefined && VERSION_FLAGS.has(command)) return;
  const own = COMMAND_MODULES.filter((m) => command !== undefined && m.names.includes(command));
  const chosen = own.length > 0 ? own : COMMAND_MODULES;
  const registers = await Promise.all(chosen.map((m) => m.load()));
  for (const register of registers) register(program, fail);
}
