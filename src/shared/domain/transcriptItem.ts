import type { AttachedImageInfo, AttachmentSummary } from './attachments';
import type { CheckpointFileNote, RewindRecord } from './checkpoints';
import type { ErrorCode } from './errors';
import type { CardImage } from './toolImages';

/**
 * One item of a task's chat (transcript.ts folds events into them). Its own file so that the
 * `rewind` event (events.ts), which carries the chat as it was, and the fold (transcript.ts) both
 * use it without a cycle between them.
 */

export type PermissionDecision = 'allow' | 'deny' | 'ask';

/** What the gatekeeper did with what a run learned. */
export type GatekeeperOutcome = 'saved' | 'rejected' | 'skipped';

export type TranscriptItem =
  /** `text`: what the model read; `typed`: what the person typed, when it differs (shown, with `text` on demand). */
  | { kind: 'user'; id: string; text: string; typed?: string; attachments?: AttachmentSummary[]; images?: AttachedImageInfo[] }
  | {
      kind: 'assistant';
      id: string;
      model: string;
      text: string;
      thinking: string;
      streaming: boolean;
      /**
       * Cut off and not picked up again: the run ended with it unfinished (an error followed, the
       * worker running it was lost, the window closed). Resuming the task continues from it.
       */
      interrupted?: boolean;
      /**
       * Given up for a retry (it stalled, or failed in a way another attempt can help): the retry's
       * answer follows it, so there is nothing to resume. Never set with `interrupted`.
       */
      retried?: boolean;
      /** Cut off because the person cancelled the task: the text stops where the cancel came. */
      cancelled?: boolean;
    }
  | {
      kind: 'tool';
      id: string;
      name: string;
      input: Record<string, unknown>;
      output: string;
      /** Images the tool returned (checked `data:` URLs; see toolImages.ts). */
      images?: CardImage[];
      result?: { isError: boolean; summary: string };
      permission?: { requestId: string; decision: PermissionDecision; reason?: string };
      /** What the call's checkpoint kept (files it changed, and any it could not keep). */
      checkpoint?: CheckpointFileNote[];
    }
  | { kind: 'error'; id: string; code: ErrorCode; message: string; retryable: boolean }
  | { kind: 'notice'; id: string; text: string }
  /** What a run read into its context: instructions files and memories (`.keel/memory/<file>`). */
  | { kind: 'context'; id: string; run: number; instructions: string[]; memories: { file: string; title: string }[] }
  /** The gatekeeper's decision at the end of a run (a memory saved, a lesson refused, nothing kept). */
  | { kind: 'gatekeeper'; id: string; run: number; decision: GatekeeperOutcome; rule: string; reasons: string[]; file?: string; title?: string }
  /** A rewind or fork: where the chat went back to, and what happened to the files. */
  | ({ kind: 'rewind' } & RewindRecord);
