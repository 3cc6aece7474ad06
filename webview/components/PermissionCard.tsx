import { useState } from 'preact/hooks';
import type { PendingPermission, PermissionChoice } from '../../src/shared/protocol/chatMessages';
import { truncate } from '../format';
import { DiffView } from './DiffView';

export interface PermissionCardProps {
  request: PendingPermission;
  /** Whether the request belongs to the task shown (else it is from another or a sub task). */
  otherTask: boolean;
  onAnswer(requestId: string, decision: PermissionChoice, feedback?: string): void;
  onOpenDiff(toolCallId: string): void;
}

/**
 * A tool call waiting for the user: what it will do, why Keel asks, the proposed change, and
 * Allow once / Always allow / Deny with optional feedback for the model. The host decides; this
 * card only sends `{requestId, decision}`.
 */
export function PermissionCard({ request, otherTask, onAnswer, onOpenDiff }: PermissionCardProps) {
  const [feedback, setFeedback] = useState('');
  const command = typeof request.input.command === 'string' ? request.input.command : undefined;
  const answer = (d: PermissionChoice) => onAnswer(request.requestId, d, feedback.trim() || undefined);
  const titleId = `perm-${request.requestId}`;
  return (
    <section class="keel-permission" data-testid="permission-card" data-request-id={request.requestId} data-tool={request.tool} role="alertdialog" aria-labelledby={titleId}>
      <div class="keel-permission-head" id={titleId}>
        <span class="codicon codicon-shield" aria-hidden="true" />
        <strong>{`Allow ${request.tool}?`}</strong>
        <span class="keel-permission-summary" title={request.summary}>{truncate(request.summary, 160)}</span>
      </div>
      <div class="keel-note">{`Keel asks because: ${request.reason}${otherTask ? ' (another task)' : ''}`}</div>
      {command && <pre class="keel-terminal">{command}</pre>}
      {request.diff && (
        <>
          <DiffView before={request.diff.before} after={request.diff.after} maxLines={30} />
          <button type="button" class="keel-link-button" data-testid="permission-open-diff" onClick={() => onOpenDiff(request.toolCallId)}>
            <span class="codicon codicon-diff" aria-hidden="true" /> Open diff
          </button>
        </>
      )}
      <input
        class="keel-text-input"
        type="text"
        data-testid="permission-feedback"
        aria-label="Feedback for Keel (optional)"
        placeholder="Feedback for Keel (optional)"
        value={feedback}
        onInput={(e) => setFeedback(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            answer('deny');
          }
        }}
      />
      <div class="keel-permission-actions">
        <button type="button" class="keel-button" data-testid="permission-allow" onClick={() => answer('allow')}>
          <span class="codicon codicon-check" aria-hidden="true" /> Allow once
        </button>
        <button type="button" class="keel-button keel-button-secondary" data-testid="permission-always" onClick={() => answer('allowAlways')}>
          <span class="codicon codicon-check-all" aria-hidden="true" /> Always allow
        </button>
        <button type="button" class="keel-button keel-button-secondary" data-testid="permission-deny" onClick={() => answer('deny')}>
          <span class="codicon codicon-close" aria-hidden="true" /> Deny
        </button>
      </div>
    </section>
  );
}
