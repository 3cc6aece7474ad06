import type { z } from 'zod';
import type { HeldLock, LockManager } from '../locks/lockManager';
import type { EditReview } from '../../shared/domain/review';
import type { TodoItem } from '../../shared/domain/todos';

/**
 * A tool in two steps (STYLE.md #4): `subject` describes what the call will touch, before
 * anything runs, so the permission engine can decide; `invoke` runs only after an allow.
 * `invoke` never throws: a failure is a result with `isError: true` and a message the model can
 * act on.
 */
export type PermissionSubject =
  | { kind: 'read'; tool: string; paths: string[]; summary: string }
  /**
   * `targets[i]`: the physical file `paths[i]` led to when the subject was made (symlinks
   * followed); the tool refuses to write if it leads elsewhere when it runs (writeTarget.ts).
   */
  | { kind: 'write'; tool: string; paths: string[]; targets?: string[]; summary: string; diff?: { path: string; before: string | null; after: string } }
  | { kind: 'execute'; tool: string; command: string; cwd: string; summary: string }
  | { kind: 'network'; tool: string; url: string; summary: string }
  | { kind: 'task'; tool: string; summary: string }
  | { kind: 'mcp'; tool: string; server: string; summary: string };

export interface ToolResult {
  /** What the model receives as the tool_result content. */
  content: string;
  isError: boolean;
  /** One line for people: "Read 120 lines of src/a.ts", "exit 0". */
  summary: string;
}

export interface SubtaskRunner {
  /** Runs a subtask to completion and returns its final answer. */
  run(description: string, prompt: string, signal: AbortSignal): Promise<ToolResult>;
}

/**
 * The checkpoint a tool takes before it changes a file (src/core/checkpoints): what the file holds
 * is kept, durably, before the write, so the step can be rewound. Bound to one tool call.
 */
export interface ToolCheckpoints {
  /**
   * Keeps what `path` (the physical file about to be written) holds now; `after` is what the tool
   * will write (null: it will delete it). Resolves once the checkpoint is on disk. Never rejects:
   * a checkpoint that cannot be kept (a limit, a read that failed) is reported on the tool's card
   * and the write goes on.
   */
  beforeWrite(path: string, after: string | null): Promise<void>;
}

/** An Edit or Write the person reviewed change by change before allowing it (shared/domain/review.ts). */
export interface ReviewedEdit {
  review: EditReview;
  /** The proposal the review was made of: the file then (null: none) and the proposed text. */
  before: string | null;
  after: string;
  path: string;
}

export interface ToolContext {
  taskId: string;
  /** Absolute path of the workspace root; relative paths resolve against it. */
  workspace: string;
  signal: AbortSignal;
  locks: LockManager;
  /**
   * The environment of every process the tool starts: Keel's own without its keys and without
   * what would make the permission analysis unsound (security/toolEnvironment.ts). The runtime
   * passes its SecretKeeper's; absent, processes get `toolEnvironment()` of Keel's environment.
   */
  env?: NodeJS.ProcessEnv;
  /** Path of the ripgrep binary, if known (the extension passes VS Code's bundled one). */
  ripgrepPath?: string;
  /** Streams live output (Bash) to the UI. */
  onOutput(chunk: string): void;
  subtasks?: SubtaskRunner;
  /** Held task lock, when the caller holds one (never re-acquire it). */
  heldLock?: HeldLock;
  /** The subject the permission decision was made on, when the runtime has it (Write/Edit check their target against it). */
  approved?: PermissionSubject;
  /** Checkpoints of this call (absent: the task keeps none, e.g. it is not recorded). */
  checkpoints?: ToolCheckpoints;
  /** Set when the person reviewed this Edit/Write change by change: write exactly `review.content`. */
  reviewed?: ReviewedEdit;
  /** TodoWrite's list: the runtime publishes it as the task's `todos` event. */
  todos?(items: TodoItem[]): void;
  /**
   * What a recursive search below `root` (Grep, Glob) must skip so that it reads nothing the
   * Read rules keep out: the permission engine's answer (engine.ts `searchExclusions`), which
   * the decision to allow the search relied on. Null: nothing to skip. Required, so that no
   * caller of a tool can forget it.
   */
  searchExclusions(root: string): Promise<SearchExclusions | null>;
}

/** See `ToolContext.searchExclusions`. */
export interface SearchExclusions {
  /** The physical folder the globs are anchored at: ripgrep runs from there. */
  root: string;
  /** ripgrep globs (gitignore syntax, `/` anchored at `root`), each passed as `--glob !GLOB`. */
  globs: string[];
  /** The rules behind them, for the note the tool adds. */
  rules: string[];
}

export interface Tool<Input = unknown> {
  readonly name: string;
  readonly description: string;
  /** A `zod/mini` schema (any zod schema works: validation goes through `z.safeParse`). */
  readonly inputSchema: z.core.$ZodType<Input>;
  /** True when the tool never changes anything (allowed in plan mode). */
  readonly readOnly: boolean;
  subject(input: Input, ctx: Pick<ToolContext, 'workspace'>): PermissionSubject;
  invoke(input: Input, ctx: ToolContext): Promise<ToolResult>;
}

/**
 * A tool with its input type erased, as held by the registry. Any `Tool<I>` is assignable
 * (method parameters are bivariant). Contract: pass `subject`/`invoke` only an input produced by
 * this tool's `inputSchema` (`parseToolInput` in execute.ts does exactly that).
 */
export type AnyTool = Tool<unknown>;
