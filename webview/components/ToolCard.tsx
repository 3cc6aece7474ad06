import type { TranscriptItem } from '../../src/shared/domain/transcript';
import { mainToolInput, truncate } from '../format';

type ToolItem = Extract<TranscriptItem, { kind: 'tool' }>;

/** A tool call: its name, main input, permission decision, result summary and (folded) output. */
export function ToolCard({ item }: { item: ToolItem }) {
  const status = item.result ? (item.result.isError ? 'error' : 'done') : 'running';
  const icon = status === 'running' ? 'codicon-loading codicon-modifier-spin' : status === 'error' ? 'codicon-error' : 'codicon-check';
  const input = mainToolInput(item.input);
  return (
    <article class={`keel-tool keel-tool-${status}`} data-testid="tool-card" data-tool={item.name} data-status={status} aria-label={`Tool ${item.name}`}>
      <div class="keel-tool-head">
        <span class={`codicon ${icon}`} aria-hidden="true" />
        <span class="keel-tool-name">{item.name}</span>
        {input && (
          <code class="keel-tool-input" title={input}>
            {truncate(input, 200)}
          </code>
        )}
      </div>
      {item.permission && (
        <div class="keel-tool-permission" data-decision={item.permission.decision}>
          {`Permission: ${item.permission.decision}${item.permission.reason ? ` (${item.permission.reason})` : ''}`}
        </div>
      )}
      {item.result && <div class="keel-tool-result">{item.result.summary}</div>}
      {item.output && (
        <details class="keel-tool-output">
          <summary>Output</summary>
          <pre>{item.output}</pre>
        </details>
      )}
    </article>
  );
}
