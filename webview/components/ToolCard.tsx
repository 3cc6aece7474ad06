import { memo } from 'preact/compat';
import { isCardImageSrc, type CardImage } from '../../src/shared/domain/toolImages';
import type { TranscriptItem } from '../../src/shared/domain/transcript';
import { mainToolInput, tailLines, truncate } from '../format';
import { DiffView } from './DiffView';
import { RewindButton } from './Messages';

type ToolItem = Extract<TranscriptItem, { kind: 'tool' }>;

export interface ToolCardProps {
  item: ToolItem;
  /** A permission prompt for this call is waiting. */
  awaitingPermission: boolean;
  onOpenDiff(toolCallId: string): void;
  onOpenSubtask(toolCallId: string): void;
  /** "Rewind to here" (absent while the task works). */
  onRewind?: ((stepId: string) => void) | undefined;
}

const COMPACT = new Set(['Read', 'Glob', 'Grep', 'LS', 'WebFetch']);
const ICONS: Record<string, string> = {
  Read: 'codicon-file',
  Glob: 'codicon-search',
  Grep: 'codicon-search',
  WebFetch: 'codicon-globe',
  Edit: 'codicon-edit',
  Write: 'codicon-new-file',
  Bash: 'codicon-terminal',
  Task: 'codicon-run-all',
};

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** "exit 0" / "exit code 2" in a Bash result summary → the code. */
function exitCode(summary: string | undefined): number | undefined {
  const m = summary?.match(/exit(?: code)?\s+(-?\d+)/i);
  return m?.[1] !== undefined ? Number(m[1]) : undefined;
}

function statusOf(item: ToolItem, awaiting: boolean): 'awaiting' | 'running' | 'error' | 'done' | 'denied' {
  if (item.permission?.decision === 'deny') return 'denied';
  if (!item.result) return awaiting ? 'awaiting' : 'running';
  return item.result.isError ? 'error' : 'done';
}

/** A denial said once, in words: "Denied by the user", "Denied: plan mode refuses edits". */
export function deniedWords(reason: string | undefined): string {
  const r = reason?.trim();
  if (!r) return 'Denied';
  return /^denied\b/i.test(r) ? r.charAt(0).toUpperCase() + r.slice(1) : `Denied: ${r}`;
}

const STATUS_ICON = {
  awaiting: 'codicon-shield',
  running: 'codicon-loading codicon-modifier-spin',
  error: 'codicon-error',
  done: 'codicon-check',
  denied: 'codicon-circle-slash',
} as const;

/**
 * A tool call. Read/Glob/Grep are one compact line; Edit/Write show an inline diff and "Open
 * diff"; Bash shows its command, live output and exit code; Task links to its subtask.
 */
export const ToolCard = memo(function ToolCard({ item, awaitingPermission, onOpenDiff, onOpenSubtask, onRewind }: ToolCardProps) {
  const status = statusOf(item, awaitingPermission);
  const compact = COMPACT.has(item.name);
  const input = mainToolInput(item.input);
  return (
    <article
      class={`keel-tool keel-tool-${status}${compact ? ' keel-tool-compact' : ''}`}
      data-testid="tool-card"
      data-tool={item.name}
      data-tool-id={item.id}
      data-status={status}
      aria-label={`Tool ${item.name}: ${truncate(input, 80)} (${status})`}
    >
      <div class="keel-tool-head">
        <span class={`codicon ${STATUS_ICON[status]}`} aria-hidden="true" />
        <span class={`codicon ${ICONS[item.name] ?? 'codicon-tools'} keel-tool-icon`} aria-hidden="true" />
        <span class="keel-tool-name">{item.name}</span>
        {input && (
          <code class="keel-tool-input" title={input}>
            {truncate(input, 200)}
          </code>
        )}
        {compact && item.result && status !== 'denied' && <span class="keel-tool-summary">{item.result.summary}</span>}
        {onRewind && <RewindButton onRewind={() => onRewind(item.id)} />}
      </div>
      {!compact && <ToolBody item={item} status={status} onOpenDiff={onOpenDiff} onOpenSubtask={onOpenSubtask} />}
      {status === 'awaiting' && <div class="keel-tool-note">Waiting for your approval below.</div>}
      {item.checkpoint && <CheckpointNote files={item.checkpoint} />}
      {status === 'denied' && (
        <div class="keel-tool-permission" data-testid="tool-denied" data-decision="deny">
          {deniedWords(item.permission?.reason)}
        </div>
      )}
    </article>
  );
});

interface BodyProps {
  item: ToolItem;
  status: ReturnType<typeof statusOf>;
  onOpenDiff(id: string): void;
  onOpenSubtask(id: string): void;
}

function ToolBody({ item, status, onOpenDiff, onOpenSubtask }: BodyProps) {
  switch (item.name) {
    case 'Edit':
    case 'Write': {
      const after = item.name === 'Write' ? str(item.input.content) : str(item.input.new_string);
      const before = item.name === 'Write' ? null : str(item.input.old_string);
      return (
        <div class="keel-tool-body">
          <DiffView before={before} after={after} maxLines={40} />
          <div class="keel-tool-actions">
            <button type="button" class="keel-button keel-button-secondary" data-testid="open-diff" onClick={() => onOpenDiff(item.id)}>
              <span class="codicon codicon-diff" aria-hidden="true" /> Open diff
            </button>
            {item.result && status !== 'denied' && <span class="keel-tool-summary">{item.result.summary}</span>}
          </div>
        </div>
      );
    }
    case 'Bash': {
      const tail = tailLines(item.output, 200);
      const code = exitCode(item.result?.summary);
      return (
        <div class="keel-tool-body">
          {(item.output || status === 'running') && (
            <pre class="keel-terminal" data-testid="bash-output" aria-live="polite">
              {tail.dropped > 0 && <span class="keel-note">{`… ${tail.dropped} earlier lines\n`}</span>}
              {tail.text || ' '}
            </pre>
          )}
          {item.result && status !== 'denied' && (
            <div class={`keel-exit ${code === 0 ? 'keel-exit-ok' : 'keel-exit-fail'}`} data-testid="exit-code">
              {code !== undefined ? `exit ${code}` : item.result.summary}
            </div>
          )}
        </div>
      );
    }
    case 'Task':
      return (
        <div class="keel-tool-body">
          {str(item.input.prompt) && <div class="keel-note keel-clamp">{truncate(str(item.input.prompt), 300)}</div>}
          <div class="keel-tool-actions">
            <button type="button" class="keel-link-button" data-testid="open-subtask" onClick={() => onOpenSubtask(item.id)}>
              <span class="codicon codicon-link" aria-hidden="true" /> Open subtask
            </button>
            {item.result && status !== 'denied' && <span class="keel-tool-summary">{item.result.summary}</span>}
          </div>
        </div>
      );
    default:
      return (
        <div class="keel-tool-body">
          {item.result && status !== 'denied' && <div class="keel-tool-result">{item.result.summary}</div>}
          {item.images && <ToolImages images={item.images} />}
          {item.output && (
            <details class="keel-tool-output">
              <summary>Output</summary>
              <pre>{tailLines(item.output, 200).text}</pre>
            </details>
          )}
        </div>
      );
  }
}

/**
 * The images a tool returned. The host built each `data:` URL from checked data; it is checked
 * again here, and anything else (a server's http URL, SVG, a malformed payload) is never put in
 * an <img>. The CSP allows `img-src data:` and the webview's own resources only.
 */
function ToolImages({ images }: { images: CardImage[] }) {
  const safe = images.filter((i) => isCardImageSrc(i.src));
  if (safe.length === 0) return null;
  return (
    <div class="keel-tool-images">
      {safe.map((i, k) => (
        <img key={k} class="keel-tool-image" data-testid="tool-image" src={i.src} alt={i.alt} title={i.alt} />
      ))}
    </div>
  );
}

/** What the call's checkpoint kept: "Checkpoint: 2 files" (restorable), and each file it could not keep and why. */
function CheckpointNote({ files }: { files: { path: string; kept: boolean; reason?: string }[] }) {
  const kept = files.filter((f) => f.kept);
  const missed = files.filter((f) => !f.kept);
  return (
    <div class="keel-tool-note keel-checkpoint" data-testid="checkpoint-note" data-kept={kept.length} data-missed={missed.length}>
      {kept.length > 0 && <span title={kept.map((f) => f.path).join('\n')}>{`Checkpoint: ${kept.length} file${kept.length === 1 ? '' : 's'} can be rewound`}</span>}
      {missed.map((f) => (
        <div key={f.path} data-testid="checkpoint-missed">
          <span class="codicon codicon-warning" aria-hidden="true" />
          {` ${f.path}: not restorable (${f.reason ?? 'no earlier content was kept'})`}
        </div>
      ))}
    </div>
  );
}
