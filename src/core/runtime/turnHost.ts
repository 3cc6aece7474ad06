import type { TaskEvent } from '../../shared/domain/events';
import type { McpToolSource } from '../mcp/toolSource';
import type { PermissionAsker } from '../permissions/gate';
import type { BudgetRequest, BudgetVerdict } from '../machines/turn/budget';

/**
 * What a running turn loop needs of the owner of its task: the one contract between a turn and
 * its host (issue 25, item 1). Two implementations:
 * - **local**: the turn runs in the host's own process (wiring.ts `wireTaskMachine`): the task's
 *   recorder, the host's asker, the host's MCP hub; its Task calls go to its parent, the task
 *   machine;
 * - **worker**: the turn runs in a worker process (workers/workerMain.ts): each call is a message
 *   of the protocol (workers/protocol.ts), and the host serves it with its local TurnHost
 *   (workers/remoteTurn.ts) — so what a prompt, a durability barrier or an MCP call does is the
 *   same code wherever the turn runs.
 */
export interface TurnHost {
  /** One event of the turn: recorded (the log first), then shown. Never throws. */
  publish(event: TaskEvent): void;
  /** Resolves once everything published so far is durable; a tool runs only after it. Absent: nothing to wait for. */
  durable?(): Promise<void>;
  /** Asks the person (a permission prompt, by the request's id); aborting withdraws the prompt. */
  asker: PermissionAsker;
  /** The task's MCP tools (the host's hub); absent: no MCP servers. */
  mcp?: McpToolSource;
  /**
   * A Task call: the owner starts the sub-agent; its answer comes back to the turn as
   * SUBTASK_RESULT. Absent: the turn's parent machine (the task machine) is the owner.
   */
  startSubtask?(call: { toolCallId: string; description: string; prompt: string }): void;
  /**
   * Whether a priced request may go (the task's budget, machines/turn/budget.ts): null when it
   * may. Asked before every answer, retry and summary. Absent: no budget.
   */
  admit?(request: BudgetRequest): Promise<BudgetVerdict>;
}
