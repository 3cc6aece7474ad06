import { useMemo } from 'preact/hooks';
import { hunksOf, type HunkChoice } from '../diff';

export interface HunkReviewProps {
  before: string | null;
  after: string;
  /** The choice per hunk so far (by index; missing: applied as proposed). */
  choices: readonly (HunkChoice | undefined)[];
  onChoose(hunk: number, choice: HunkChoice): void;
}

const CHOICE_WORDS = { accept: 'applied', reject: 'left out', edit: 'your lines' } as const;

/**
 * A proposed Edit/Write change by change (issue 23, "Per-hunk review"): each hunk with its old and
 * new lines, and Apply / Leave out / Edit. Keyboard: every control is a button or a textarea (Tab
 * moves between them); on a focused hunk, A applies it, R leaves it out, E edits it. The card sends
 * only the choices; the host rebuilds the text from the proposal it holds (review.ts `reviewOf`).
 */
export function HunkReview({ before, after, choices, onChoose }: HunkReviewProps) {
  const hunks = useMemo(() => hunksOf(before, after), [before, after]);
  if (hunks.length === 0) return null;
  return (
    <ol class="keel-hunks" data-testid="hunk-review" aria-label={`${hunks.length} change${hunks.length === 1 ? '' : 's'} to review`}>
      {hunks.map((h) => {
        const c = choices[h.index] ?? { kind: 'accept' as const };
        const choose = (next: HunkChoice) => onChoose(h.index, next);
        return (
          <li
            key={h.index}
            class={`keel-hunk keel-hunk-${c.kind}`}
            data-testid="hunk"
            data-hunk={h.index}
            data-choice={c.kind}
            tabIndex={0}
            aria-label={`Change ${h.index + 1} of ${hunks.length}: ${CHOICE_WORDS[c.kind]}`}
            onKeyDown={(e) => {
              if (e.target !== e.currentTarget) return;
              const k = e.key.toLowerCase();
              if (k === 'a') choose({ kind: 'accept' });
              else if (k === 'r') choose({ kind: 'reject' });
              else if (k === 'e') choose({ kind: 'edit', lines: c.kind === 'edit' ? c.lines : h.newLines });
              else return;
              e.preventDefault();
            }}
          >
            <pre class="keel-diff">
              {h.oldLines.map((l, i) => (
                <div key={`o${i}`} class="keel-diff-del">{`- ${l}`}</div>
              ))}
              {h.newLines.map((l, i) => (
                <div key={`n${i}`} class="keel-diff-add">{`+ ${l}`}</div>
              ))}
            </pre>
            {c.kind === 'edit' && (
              <textarea
                class="keel-text-input"
                data-testid="hunk-edit"
                aria-label={`Your lines for change ${h.index + 1}`}
                rows={Math.min(10, Math.max(2, c.lines.length))}
                spellcheck={false}
                style={{ width: '100%', fontFamily: 'var(--vscode-editor-font-family)' }}
                value={c.lines.join('\n')}
                onInput={(e) => choose({ kind: 'edit', lines: e.currentTarget.value.split('\n') })}
              />
            )}
            <div class="keel-permission-actions">
              <button type="button" class="keel-button keel-button-secondary" data-testid="hunk-accept" aria-pressed={c.kind === 'accept'} onClick={() => choose({ kind: 'accept' })}>
                Apply
              </button>
              <button type="button" class="keel-button keel-button-secondary" data-testid="hunk-reject" aria-pressed={c.kind === 'reject'} onClick={() => choose({ kind: 'reject' })}>
                Leave out
              </button>
              <button
                type="button"
                class="keel-button keel-button-secondary"
                data-testid="hunk-edit-button"
                aria-pressed={c.kind === 'edit'}
                onClick={() => choose({ kind: 'edit', lines: c.kind === 'edit' ? c.lines : h.newLines })}
              >
                Edit
              </button>
            </div>
          </li>
        );
      })}
    </ol>
  );
}
