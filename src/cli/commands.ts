import type { Command } from 'commander';
import { registerPolicyCommands } from './policy-command.js';
import { registerDecide } from './decide-command.js';
import { registerDecisionCommands } from './decision-command.js';
import { registerMcpCommands } from './mcp-command.js';
import { registerGateCommands } from './gate-command.js';
import { registerLoginCommands } from './login-command.js';
import { registerExecCommand } from './exec-command.js';
import { registerConnectCommands } from './connect-command.js';
import { registerInitCommand } from './init-command.js';
import { registerDaemonCommands } from './daemon-command.js';
import { registerDoctorCommand } from './doctor-command.js';
import { registerSetupCommand } from './setup-command.js';
import { registerAdminCommands } from './admin-command.js';
import { registerBudgetCommand } from './budget-command.js';
import { registerSkillCommands } from './skill-command.js';
import { registerRollbackCommand } from './rollback-command.js';

/** Every command but the servers' (`proxy`, `controlplane`), which `program.ts` registers itself. */
export function registerCommands(program: Command, fail: (err: unknown) => never): void {
  registerDecide(program, fail);
  registerPolicyCommands(program, fail);
  registerDecisionCommands(program, fail);
  registerMcpCommands(program, fail);
  registerGateCommands(program, fail);
  registerLoginCommands(program, fail);
  registerExecCommand(program, fail);
  registerConnectCommands(program, fail);
  registerInitCommand(program, fail);
  registerDaemonCommands(program, fail);
  registerDoctorCommand(program);
  registerSetupCommand(program, fail);
  registerAdminCommands(program, fail);
  registerBudgetCommand(program, fail);
  registerSkillCommands(program, fail);
  registerRollbackCommand(program);
}
