import type { MessageAttachment } from '../../shared/domain/attachments';
import type { TaskEvent } from '../../shared/domain/events';
import type { TaskTranscript } from '../../shared/domain/transcript';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import type { ProviderConfig } from '../providers/types';
import type { CommandRun } from '../commands/commandRun';
import type { AttachedImage } from '../machines/task/task.machine';
import type { TaskBudget } from './taskBudget';

/** Defined once in src/shared (the webview needs it too); hosts may take it from here. */
export type { PermissionMode } from '../../shared/domain/permissionModes';

/** What a host asks for when it starts a task (`TaskRuntime.startTask`). */
export interface StartTaskOptions {
  prompt: string;
  provider: ProviderConfig;
  mode?: PermissionMode;
  maxTurns?: number;
  /**
   * Reads the provider settings again each time the task (re)initialises, so a key set after a
   * `no_api_key` error is used by Retry or the next message. Defaults to `provider` as given.
   */
  refreshProvider?: () => Promise<ProviderConfig>;
  /** The task's title; default: the prompt's first line. */
  title?: string;
  /**
   * Set for an iteration of a loop (docs/loop.md): this file (the loop's progress.md) may be
   * written without a prompt in every mode but plan. Deny and ask rules still apply.
   */
  loopProgressFile?: string;
  /** What the first message's mentions brought (src/core/mentions), read by the model after its text. */
  attachments?: MessageAttachment[];
  /** The first message is a custom slash command's (docs/commands.md): what its run may use. */
  command?: CommandRun;
  /** Images attached to the first message (`keel run --image`, the composer). */
  images?: AttachedImage[];
  /**
   * What the person typed for the first message, when `prompt` is not that (a custom command
   * expanded into it): shown as the message, and the task's default title.
   */
  typed?: string;
  /**
   * The task's budget cap in US dollars (docs/cli.md, "Budget"): `--max-budget-usd`, else the
   * runtime's default (`keel.maxBudgetUsd`). A resumed task keeps its stored cap unless this
   * raises (or lowers) it.
   */
  maxBudgetUsd?: number;
  /** A budget shared with other tasks (every iteration of a `keel loop`); overrides `maxBudgetUsd`. */
  sharedBudget?: TaskBudget;
}

export type { CommandRun } from '../commands/commandRun';

/** What may come with a user message besides its text. */
export interface MessageExtras {
  /** What its `@` mentions brought (src/core/mentions): the model reads them after the text. */
  attachments?: MessageAttachment[];
  /** The message is a custom slash command's: what the run answering it may use (a queued one keeps it). */
  command?: CommandRun;
  /** Images attached to the message (checked: context/promptImages.ts). */
  images?: AttachedImage[];
  /**
   * What the person typed, when the text sent is not that (`/review a.ts`, whose command file's
   * text is what the model reads): views, the log and `keel run`'s text output show it, with the
   * text sent on demand. Never sent to the model.
   */
  typed?: string;
}

/**
 * What a host (the extension, the CLI) sees of a task. A host never drives a task's machine
 * directly; it sends the task intents (a user message, cancel, retry) and watches its events,
 * and the task's own machine decides what happens.
 */
export interface TaskHandle {
  readonly id: string;
  /** The transcript so far: what a view that attaches now must show. */
  transcript(): TaskTranscript;
  /**
   * Future events only, in order. A task starts on the microtask after `startTask` returns, so a
   * listener subscribed synchronously sees every event. Returns the unsubscribe function.
   */
  subscribe(listener: (event: TaskEvent) => void): () => void;
  /**
   * How many events this task delivered so far in this process (the `taskSeq` of the last one on
   * the event bus); `transcript()` holds exactly those. Absent: the task is not on a bus.
   */
  eventSeq?(): number;
  /**
   * A message from the person. While a run is under way it is queued (a `queued` event) and sent
   * when the run ends, as the next run's message; it is never refused and never makes a second
   * request. A cancelled or stopped run gives queued messages back (`unqueued` returned).
   */
  sendUserMessage(text: string, extras?: MessageExtras): void;
  /** Cancels queued message `id` before it is sent (`unqueued` withdrawn); a message already sent is left alone. */
  withdrawQueued(id: string): void;
  /** Aborts the request in flight, the running tool and its child processes. */
  cancel(): void;
  /** After a failure the task waits; this sends the last request again. */
  retry(): void;
  /** The permission mode from now on (the running turn's next decisions and later runs). */
  setMode(mode: PermissionMode): void;
  /** Gives up on a task that waits after a failure: it ends `failed`. */
  abandon(): void;
  /**
   * A new budget cap (docs/cli.md, "Budget"); a task paused for its budget continues at once
   * when its next request now fits (else it pauses again, saying so). Absent: no budgets.
   */
  setBudget?(capUsd: number | null): void;
  /** Resolves when the task reaches a state where it waits for the user or ends. */
  settled(): Promise<TaskEvent & { type: 'done' }>;
  /**
   * Resolves when everything the task published so far is saved; rejects (StoreError 'io',
   * saying why) when its record failed. Absent or resolving at once: the task is not recorded.
   */
  recorded?(): Promise<void>;
}

/**
 * Continuing a stored task (`TaskRuntime.resume`): the provider and mode to use from now on, and
 * an optional follow-up. An interrupted task resumes with a note telling the model how long ago
 * and what was cut off (the follow-up, if any, comes after it); a settled task needs a follow-up.
 */
export interface ResumeTaskOptions extends Omit<StartTaskOptions, 'prompt'> {
  followUp?: string;
}

/**
 * `TaskRuntime.resume` of a settled task (completed, failed, aborted) without a follow-up: there
 * is nothing to continue with. The caller's request was incomplete, not the task broken.
 */
export class FollowUpRequired extends Error {
  override readonly name = 'FollowUpRequired';
  constructor(
    readonly taskId: string,
    readonly status: string,
  ) {
    super(`task ${taskId} has ended (${status}); give a follow-up message to continue it`);
  }
}
