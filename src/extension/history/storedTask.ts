import { taskStateTags } from '../../core/machines/task/taskTags';
import type { TaskHandle } from '../../core/runtime/types';
import type { TaskEvent } from '../../shared/domain/events';
import type { TaskTranscript } from '../../shared/domain/transcript';
import type { StoredTaskState } from '../../shared/protocol/chatMessages';

/**
 * A task shown from the store: its transcript as the log left it, read-only. Nothing drives it,
 * so it publishes no events; its state reads as the stored status (`interrupted` for a task whose
 * process went away) unless another window runs it. Intents are refused: the chat resumes the
 * task (which gives a live handle) instead of sending them here.
 */
export class StoredTaskHandle implements TaskHandle {
  private readonly shown: TaskTranscript;

  constructor(
    readonly id: string,
    transcript: TaskTranscript,
    readonly stored: StoredTaskState,
  ) {
    const state = stored.heldElsewhere ? transcript.state : stored.status;
    // Nothing streams here: a wait on a quiet answer the log ended in is not shown as going on.
    const { waiting: _, ...settled } = transcript;
    this.shown = {
      ...settled,
      state,
      // A stored status is also the name of the task state it was recorded in.
      tags: taskStateTags(state),
      // Not busy here: no request of this window is in flight, so the composer offers Send.
      done: true,
      streamMode: null,
    };
  }

  transcript(): TaskTranscript {
    return this.shown;
  }

  subscribe(_listener: (event: TaskEvent) => void): () => void {
    return () => undefined;
  }

  sendUserMessage(): void {}
  withdrawQueued(): void {}
  cancel(): void {}
  retry(): void {}
  abandon(): void {}
  /** A stored task runs nowhere here: there is no mode to change until it is resumed. */
  setMode(): void {}

  settled(): Promise<TaskEvent & { type: 'done' }> {
    return Promise.resolve({ type: 'done', taskId: this.id, status: this.stored.status, stopReason: null });
  }
}

export function isStoredTask(task: TaskHandle | undefined): task is StoredTaskHandle {
  return task instanceof StoredTaskHandle;
}
