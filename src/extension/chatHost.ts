import type { PermissionMode } from '../shared/domain/permissionModes';
import type { ChatConfig } from '../shared/protocol/toWebview';
import type { PermissionAsker } from '../core/permissions/gate';
import type { ProviderConfig } from '../core/providers/types';
import type { EventBus } from '../core/events/eventBus';
import type { StartTaskOptions, TaskHandle } from '../core/runtime/types';
import type { Logger } from './logger';
import type { NotificationPrompt, PromptSurface } from './permissionBroker';
import type { RuleCheck } from './permissions/alwaysAllow';
import type { RuleScope } from '../shared/protocol/chatMessages';
import type { HistoryServices } from './history/taskHistory';
import type { WorkbenchServices } from './viewRequests';
import type { McpChat } from './mcp/mcpRequests';
import type { LoopChat } from './loops/loopRequests';
import type { MemoryWorkbench } from './memory/memoryRequests';
import type { PoolView } from './taskWorker';
import type { PermissionDecider } from '../core/runtime/permissionCheck';
import type { ProblemEntry, TerminalCapture } from '../core/mentions/reports';

/**
 * What `@` mentions need from the editor (src/core/mentions): the workspace they resolve in, and
 * what only the editor knows. Absent in a host without a folder: mentions are then sent as text.
 */
export interface EditorMentions {
  workspace: string;
  /** The editor's diagnostics, of one workspace-relative file or of all. */
  problems?(path: string | undefined): Promise<ProblemEntry[]>;
  /** The active terminal's selection and last command; null when no terminal is open. */
  terminal?(): Promise<TerminalCapture | null>;
}
import type { ChatCommands } from './slashChat';

/** The part of the core's TaskRuntime the chat uses (the real class satisfies it structurally). */
export interface TaskRuntimeLike {
  /** The process's event bus: the views follow the shown task through a queued subscriber of it (`followTask`, viewConnection.ts). */
  readonly bus?: EventBus | undefined;
  startTask(options: StartTaskOptions): TaskHandle;
  get(id: string): TaskHandle | undefined;
  list(): TaskHandle[];
  /** The subtask a parent started for one Task tool call, if this runtime runs it. */
  subtaskFor(parentId: string, toolCallId: string): TaskHandle | undefined;
  /** Stops every task and records the unsettled ones as interrupted (the window is closing). */
  interruptAll(): string[];
  /** The worker pool turns run on (null: in process); the chat header shows the shown task's worker. */
  workerPool?(): PoolView | null;
  /** The permission engine the tasks use (mentions obey the same rules). */
  readonly permissions?: PermissionDecider;
  /** Redacts the secrets Keel knows from text (mentions' attachments, as tool output). */
  readonly secrets?: { redact(text: string): string };
  dispose(): void;
  /** Resolves once the records of the tasks it stopped are written and their locks released (TaskRuntime.closed). */
  closed?(): Promise<void>;
}

/** What the controller needs from its host (VS Code in the extension, fakes in tests). */
export interface ChatHost {
  readonly log: Logger;
  /**
   * Creates the runtime on first use, asking permissions through `asker`; may reject (e.g. no
   * folder open). Called at most once per success.
   */
  loadRuntime(asker: PermissionAsker): Promise<TaskRuntimeLike>;
  /** The provider settings with the key for a run in `mode` (its model: the model-selection machine), read when a run starts. */
  providerConfig(mode: PermissionMode): Promise<ProviderConfig>;
  /** What views show about the configuration for the chat's `mode` (never a key). */
  chatConfig(mode: PermissionMode): ChatConfig;
  permissionMode(): PermissionMode;
  /** Opens a URL outside VS Code. */
  openExternal(href: string): Promise<unknown>;
  /** A modal question; resolves true when the user confirms. */
  confirm(message: string, detail: string): Promise<boolean>;
  /** A warning the user sees (a notification). */
  warn(message: string): void;
  /**
   * A task paused at its budget (docs/cli.md, "Budget"): tells the person and offers to raise it;
   * resolves with the new cap, or null when the person leaves it. Absent: the header says it only.
   */
  raiseBudget?(budget: { capUsd: number | null; spentUsd: number }): Promise<number | null>;
  /** The notification prompt for a permission request (shown when no chat view is visible). */
  notifyPermission: NotificationPrompt;
  /** Other places a prompt shows (the diff editor for edits, a modal for risky commands). */
  permissionSurfaces?: PromptSurface[];
  /** Saves "Always allow" rules to a settings file (the engine's saveRule). */
  saveRules?(rules: string[], where: RuleScope): Promise<void>;
  /** Validates an "Always allow" rule the user edited. */
  checkRule?: RuleCheck;
  /** Files, diffs, clipboard and settings. */
  workbench: WorkbenchServices;
  /** The length of the views' queue on the event bus (default 1,000; tests make it short). */
  viewQueueCapacity?: number;
  /** Counts a task this window runs (its runs are the app session's queries). */
  watchTask?(task: TaskHandle): void;
  /** Save dialogs, confirmations and the last task shown, for the history (default: none, in memory). */
  history?: HistoryServices;
  /** The window's MCP servers (the settings page's section; `@server:uri` and `/mcp__…` in prompts). */
  mcp?: McpChat;
  /** The workspace's loops (the loop page); absent: the page says loops need a folder. */
  loops?: LoopChat;
  /** The workspace's memories (the Memory page); absent: the page says memory needs a folder. */
  memory?: MemoryWorkbench;
  /** What `@` mentions read from the editor; absent: mentions stay text (no folder open). */
  mentions?: EditorMentions;
  /** Slash commands: Keel's built-ins and the `.claude`/`.keel` commands (docs/commands.md). */
  commands?: ChatCommands;
  /** Opens the model picker (`/model` without a name). */
  selectModel?(): void;
}
