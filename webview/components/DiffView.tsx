import { useMemo } from 'preact/hooks';
import { diffLines, withContext } from '../diff';

export interface DiffViewProps {
  before: string | null;
  after: string;
  /** At most this many lines are shown (the rest: "N more lines"). */
  maxLines?: number;
}

/** An inline line diff (removed lines red, added green), with unchanged runs folded. */
export function DiffView({ before, after, maxLines = 60 }: DiffViewProps) {
  const rows = useMemo(() => withContext(diffLines(before, after)), [before, after]);
  const shown = rows.slice(0, maxLines);
  const added = rows.filter((r) => r?.kind === 'add').length;
  const removed = rows.filter((r) => r?.kind === 'del').length;
  return (
    <div class="keel-diff" data-testid="diff" role="figure" aria-label={`Diff: ${added} lines added, ${removed} removed`}>
      <div class="keel-diff-stats">
        <span class="keel-diff-added">+{added}</span> <span class="keel-diff-removed">−{removed}</span>
      </div>
      <pre class="keel-diff-body">
        {shown.map((r, i) =>
          r === null ? (
            <div key={i} class="keel-diff-line keel-diff-gap">⋯</div>
          ) : (
            <div key={i} class={`keel-diff-line keel-diff-${r.kind}`}>
              <span class="keel-diff-sign" aria-hidden="true">{r.kind === 'add' ? '+' : r.kind === 'del' ? '−' : ' '}</span>
              {r.text}
            </div>
          ),
        )}
        {rows.length > shown.length && <div class="keel-diff-line keel-diff-gap">{`… ${rows.length - shown.length} more lines`}</div>}
      </pre>
    </div>
  );
}
