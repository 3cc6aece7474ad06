import type { KeelError } from '../../shared/domain/errors';
import type { LockManager } from '../locks/lockManager';
import type { TurnLimits } from '../machines/turn/turn.machine';
import type { PermissionAsker } from '../permissions/gate';
import type { SandboxSettings } from '../permissions/sandbox';
import type { ModelProvider, ProviderConfig } from '../providers/types';
import type { ToolRegistry } from '../tools/registry';
import type { McpToolSource } from '../mcp/toolSource';
import type { PermissionDecider } from './wiring';

export interface TaskRuntimeOptions {
  workspace: string;
  ripgrepPath?: string;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  asker?: PermissionAsker;
  /** Builds a provider from its config; defaults to the real ones (`createProvider`). */
  providerFactory?: (config: ProviderConfig) => ModelProvider | KeelError;
  tools?: ToolRegistry;
  limits?: Partial<TurnLimits>;
  locks?: LockManager;
  /**
   * The task store's root (docs/persistence.md). With it every task is recorded (event log, meta,
   * lock) and stored tasks can be listed, inspected and resumed; without it tasks live in memory.
   */
  storageDir?: string;
  /** Names this host in "running in another window or process" messages (e.g. "keel run"). */
  ownerLabel?: string;
  /** How long streamed text may wait before it is written to the log (default 250 ms). */
  flushIntervalMs?: number;
  /**
   * Decides tool calls. Default: the permission engine for `workspace` (rules from the settings
   * files, the shell parser), created on first use.
   */
  permissions?: PermissionDecider;
  /** Extra settings files for the default engine (the CLI's --settings). */
  settingsFiles?: string[];
  /** Runs Bash inside bubblewrap (Linux) when enabled. */
  sandbox?: SandboxSettings;
  /**
   * MCP servers' tools for every task (the host's `McpHub`, or a worker's IPC client of it). The
   * runtime never starts or stops it: the host owns it.
   */
  mcp?: McpToolSource;
}
