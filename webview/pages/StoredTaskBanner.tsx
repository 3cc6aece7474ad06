import type { StoredTaskState } from '../../src/shared/protocol/chatMessages';
import { stateLook } from '../../src/shared/words/task';

export interface StoredTaskBannerProps {
  stored: StoredTaskState;
  onResume(): void;
}

/** What the banner says about a task shown from the store. */
export function bannerText(s: StoredTaskState): string {
  if (s.heldElsewhere && s.status === 'running') return `Running in ${s.heldElsewhere}. Shown read-only: continue it there, or Take over once it has stopped.`;
  if (s.heldElsewhere) return `Open in ${s.heldElsewhere}. Shown read-only: continue it there, or Take over once that window has let it go.`;
  if (s.otherWorkspace) return `This task belongs to ${s.otherWorkspace}. Shown read-only.`;
  if (s.status === 'interrupted') return 'This task was interrupted (the window, or the worker process running it, stopped while it ran). Resume continues it.';
  const sentence = stateLook(s.status).sentence;
  if (s.resumable) return `This task ${sentence}. Resume continues it, or send a follow-up.`;
  return `This task ${sentence}. Send a follow-up to continue it.`;
}

/** The banner's icon: a lock when another window holds the task, else the icon of its status. */
export function bannerIcon(s: StoredTaskState): string {
  if (s.heldElsewhere) return 'codicon-lock';
  if (s.otherWorkspace) return 'codicon-folder';
  return stateLook(s.status).icon;
}

/** Above the transcript of a task shown from the store: why it is read-only, and Resume or Take over. */
export function StoredTaskBanner({ stored, onResume }: StoredTaskBannerProps) {
  const action = stored.heldElsewhere ? 'Take over' : stored.resumable ? 'Resume' : null;
  return (
    <div class="keel-notice keel-stored-banner" data-testid="stored-banner" data-status={stored.status} data-held-elsewhere={stored.heldElsewhere ? 'true' : 'false'} role="status">
      <span class={`codicon ${bannerIcon(stored)}`} aria-hidden="true" />
      <span class="keel-error-text">{bannerText(stored)}</span>
      {action && (
        <button type="button" class="keel-button keel-button-secondary" data-testid={stored.heldElsewhere ? 'take-over' : 'banner-resume'} onClick={onResume}>
          <span class="codicon codicon-debug-continue" aria-hidden="true" /> {action}
        </button>
      )}
    </div>
  );
}
