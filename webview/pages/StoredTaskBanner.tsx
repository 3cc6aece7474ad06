import type { StoredTaskState } from '../../src/shared/protocol/chatMessages';

export interface StoredTaskBannerProps {
  stored: StoredTaskState;
  onResume(): void;
}

/** What the banner says about a task shown from the store. */
export function bannerText(s: StoredTaskState): string {
  if (s.heldElsewhere) return `Running in another window (${s.heldElsewhere}). Shown read-only; take it over once that window is closed.`;
  if (s.otherWorkspace) return `This task belongs to ${s.otherWorkspace}. Shown read-only.`;
  if (s.status === 'interrupted') return 'This task was interrupted (the window was reloaded or closed while it ran). Resume continues it.';
  if (s.resumable) return `This task ended ${s.status}. Resume continues it, or send a follow-up.`;
  return `This task is ${s.status}. Send a follow-up to continue it.`;
}

/** Above the transcript of a task shown from the store: why it is read-only, and Resume or Take over. */
export function StoredTaskBanner({ stored, onResume }: StoredTaskBannerProps) {
  const action = stored.heldElsewhere ? 'Take over' : stored.resumable ? 'Resume' : null;
  return (
    <div class="keel-notice keel-stored-banner" data-testid="stored-banner" data-status={stored.status} data-held-elsewhere={stored.heldElsewhere ? 'true' : 'false'} role="status">
      <span class={`codicon ${stored.heldElsewhere ? 'codicon-lock' : 'codicon-debug-pause'}`} aria-hidden="true" />
      <span class="keel-error-text">{bannerText(stored)}</span>
      {action && (
        <button type="button" class="keel-button keel-button-secondary" data-testid={stored.heldElsewhere ? 'take-over' : 'banner-resume'} onClick={onResume}>
          <span class="codicon codicon-debug-continue" aria-hidden="true" /> {action}
        </button>
      )}
    </div>
  );
}
