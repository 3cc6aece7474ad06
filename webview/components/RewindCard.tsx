import { useEffect, useRef, useState } from 'preact/hooks';
import type { RewindScope } from '../../src/shared/domain/checkpoints';
import type { RewindPreviewView } from '../../src/shared/protocol/rewindMessages';

export interface RewindCardProps {
  preview: RewindPreviewView;
  onApply(previewId: string, scope: RewindScope, overwrite: string[]): void;
  onCancel(previewId: string): void;
  onOpenDiff(previewId: string, path: string): void;
}

const SCOPES: { value: RewindScope; label: string }[] = [
  { value: 'both', label: 'Files and conversation' },
  { value: 'files', label: 'Files only' },
  { value: 'conversation', label: 'Conversation only' },
];

const ACTION_WORDS = { restore: 'restore', remove: 'remove (it did not exist then)', notRestorable: 'not restorable' } as const;

/**
 * What "Rewind to here" would do, before anything is written: each file that would change (its
 * diff is open in VS Code's diff editor; a row opens it again), files the person changed since
 * Keel wrote them — each a choice to keep theirs (the default) or overwrite —, files that cannot
 * be restored and why, and what to rewind. Enter rewinds, Esc cancels.
 */
export function RewindCard({ preview, onApply, onCancel, onOpenDiff }: RewindCardProps) {
  const [scope, setScope] = useState<RewindScope>('both');
  const [overwrite, setOverwrite] = useState<ReadonlySet<string>>(new Set());
  const ref = useRef<HTMLElement>(null);
  useEffect(() => ref.current?.focus(), [preview.previewId]);
  const withFiles = scope !== 'conversation';
  const apply = () => onApply(preview.previewId, scope, [...overwrite]);
  const changing = preview.files.filter((f) => f.action !== 'notRestorable');
  const title = preview.stepKind === 'rewind' ? `Undo: back to before step ${preview.step}` : `Rewind to before step ${preview.step}`;
  return (
    <section
      ref={ref}
      class="keel-permission keel-rewind"
      data-testid="rewind-card"
      data-step={preview.step}
      role="dialog"
      aria-label={title}
      tabIndex={-1}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          e.stopPropagation();
          onCancel(preview.previewId);
        } else if (e.key === 'Enter' && !(e.target instanceof HTMLSelectElement)) {
          e.preventDefault();
          apply();
        }
      }}
    >
      <div class="keel-permission-head">
        <span class="codicon codicon-discard" aria-hidden="true" />
        <strong>{title}</strong>
        <span class="keel-permission-summary" title={preview.label}>{preview.label}</span>
      </div>
      <label class="keel-note">
        {'Put back: '}
        <select class="keel-select" data-testid="rewind-scope" value={scope} onChange={(e) => setScope(e.currentTarget.value as RewindScope)}>
          {SCOPES.map((s) => (
            <option key={s.value} value={s.value}>{s.label}</option>
          ))}
        </select>
      </label>
      {withFiles && (
        <ul class="keel-rewind-files" data-testid="rewind-files" aria-label="Files">
          {preview.files.length === 0 && <li class="keel-note">No file would change.</li>}
          {preview.files.map((f) => (
            <li key={f.path} data-testid="rewind-file" data-path={f.path} data-action={f.action} data-conflict={f.conflict ? 'true' : 'false'}>
              {f.action === 'notRestorable' ? (
                <span class="keel-note">
                  <span class="codicon codicon-warning" aria-hidden="true" /> {`${f.path} — not restorable: ${f.reason ?? 'no earlier content was kept'}`}
                </span>
              ) : (
                <>
                  <button type="button" class="keel-link-button" data-testid="rewind-file-diff" title="Show the diff" onClick={() => onOpenDiff(preview.previewId, f.path)}>
                    {f.path}
                  </button>
                  <span class="keel-note">{` ${ACTION_WORDS[f.action]}`}</span>
                  {f.conflict && (
                    <select
                      class="keel-select"
                      data-testid="rewind-conflict"
                      aria-label={`${f.path} was changed since Keel wrote it`}
                      value={overwrite.has(f.path) ? 'overwrite' : 'keep'}
                      onChange={(e) => {
                        const next = new Set(overwrite);
                        if (e.currentTarget.value === 'overwrite') next.add(f.path);
                        else next.delete(f.path);
                        setOverwrite(next);
                      }}
                    >
                      <option value="keep">You changed it since: keep yours</option>
                      <option value="overwrite">You changed it since: overwrite it</option>
                    </select>
                  )}
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      {scope !== 'files' && (
        <div class="keel-note" data-testid="rewind-conversation">
          {`The conversation goes back to ${plural(preview.conversationMessages, 'message')}; what came after stays in the task's history (undo with this rewind's Undo).`}
        </div>
      )}
      {withFiles && preview.notes.map((n, i) => (
        <div key={i} class="keel-note" data-testid="rewind-note">{n}</div>
      ))}
      <div class="keel-permission-actions">
        <button type="button" class="keel-button" data-testid="rewind-apply" onClick={apply}>
          <span class="codicon codicon-discard" aria-hidden="true" /> {withFiles && changing.length ? `Rewind (${changing.length} file${changing.length === 1 ? '' : 's'})` : 'Rewind'}
        </button>
        <button type="button" class="keel-button keel-button-secondary" data-testid="rewind-cancel" onClick={() => onCancel(preview.previewId)}>
          Cancel
        </button>
      </div>
    </section>
  );
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
