import { useMemo, useState } from 'preact/hooks';
import { type AlwaysAllow, type PendingPermission, type PermissionChoice, RULE_SCOPES, RULE_SCOPE_FILES, type RuleScope } from '../../src/shared/protocol/chatMessages';
import { truncate } from '../format';
import { DiffView } from './DiffView';
import { HunkReview } from './HunkReview';
import { hunksOf, type HunkChoice } from '../diff';

export interface PermissionCardProps {
  request: PendingPermission;
  /** Whether the request belongs to the task shown (else it is from another or a sub task). */
  otherTask: boolean;
  /** `review`: an Edit/Write allowed with each hunk's choice (sent only when some hunk is not applied as proposed). */
  onAnswer(requestId: string, decision: PermissionChoice, feedback?: string, always?: AlwaysAllow, review?: { choices: HunkChoice[] }): void;
  onOpenDiff(toolCallId: string): void;
}

const SCOPE_LABELS: Record<RuleScope, string> = {
  local: 'This project, only me (local)',
  project: 'This project, shared (project)',
  user: 'All my projects (user)',
};

/** The rules a textarea holds: one per line, blank lines dropped. Pure. */
export function rulesOfText(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

/**
 * A tool call waiting for the user: what it will do, why Keel asks (the reason and the rule),
 * the proposed change, and Allow once / Always allow / Deny with optional feedback for the
 * model. "Always allow" first shows the rule(s) it will save, editable, and where (local — the
 * default —, project or user settings). The host decides and validates; this card only sends
 * `{requestId, decision, always?}`.
 */
export function PermissionCard({ request, otherTask, onAnswer, onOpenDiff }: PermissionCardProps) {
  const [feedback, setFeedback] = useState('');
  const [always, setAlways] = useState(false);
  const [rulesText, setRulesText] = useState((request.suggestedRules ?? []).join('\n'));
  const [where, setWhere] = useState<RuleScope>('local');
  // The person's choice per hunk of the proposed change (missing: applied as proposed).
  const [choices, setChoices] = useState<(HunkChoice | undefined)[]>([]);
  const reviewed = choices.some((c) => c !== undefined && c.kind !== 'accept');
  const hunkCount = useMemo(() => (request.diff ? hunksOf(request.diff.before, request.diff.after).length : 0), [request.diff]);
  // One choice per hunk, in order (a hunk not touched applies as proposed).
  const allChoices = (): HunkChoice[] => Array.from({ length: hunkCount }, (_, i) => choices[i] ?? { kind: 'accept' });
  const command = typeof request.input.command === 'string' ? request.input.command : undefined;
  const answer = (d: PermissionChoice, a?: AlwaysAllow) =>
    onAnswer(request.requestId, d, feedback.trim() || undefined, a, d === 'allow' && reviewed ? { choices: allChoices() } : undefined);
  const titleId = `perm-${request.requestId}`;
  const rules = rulesOfText(rulesText);
  const ruleShown = request.rule && !request.reason.includes(request.rule) ? ` (rule ${request.rule})` : '';
  return (
    <section
      class="keel-permission"
      data-testid="permission-card"
      data-request-id={request.requestId}
      data-tool={request.tool}
      data-risky={request.risky ? 'true' : 'false'}
      role="alertdialog"
      aria-labelledby={titleId}
    >
      <div class="keel-permission-head" id={titleId}>
        <span class="codicon codicon-shield" aria-hidden="true" />
        <strong>{`Allow ${request.tool}?`}</strong>
        <span class="keel-permission-summary" title={request.summary}>{truncate(request.summary, 160)}</span>
        {request.risky && (
          <span class="keel-note" data-testid="permission-risky">
            <span class="codicon codicon-warning" aria-hidden="true" /> risky
          </span>
        )}
      </div>
      <div class="keel-note" data-testid="permission-reason">{`Keel asks because: ${request.reason}${ruleShown}${otherTask ? ' (another task)' : ''}`}</div>
      {command && <pre class="keel-terminal">{command}</pre>}
      {request.diff && (
        <>
          <DiffView before={request.diff.before} after={request.diff.after} maxLines={30} />
          {(request.tool === 'Edit' || request.tool === 'Write') && (
            <details class="keel-hunk-details" open={reviewed} data-testid="review-hunks">
              <summary>Review each change</summary>
              <HunkReview
                before={request.diff.before}
                after={request.diff.after}
                choices={choices}
                onChoose={(i, c) => setChoices(Array.from({ length: Math.max(hunkCount, choices.length) }, (_, k) => (k === i ? c : choices[k])))}
              />
            </details>
          )}
          <button type="button" class="keel-link-button" data-testid="permission-open-diff" onClick={() => onOpenDiff(request.toolCallId)}>
            <span class="codicon codicon-diff" aria-hidden="true" /> Open diff (Accept / Reject in the editor)
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
      {always ? (
        <div data-testid="permission-always-form" style={{ display: 'flex', flexDirection: 'column', gap: '6px' }}>
          <label class="keel-note" for={`${titleId}-rules`}>
            Rule to save (one per line; later calls it matches run without asking):
          </label>
          <textarea
            id={`${titleId}-rules`}
            class="keel-text-input"
            data-testid="permission-rule-input"
            rows={Math.min(4, Math.max(1, rules.length))}
            spellcheck={false}
            style={{ width: '100%', resize: 'vertical', fontFamily: 'var(--vscode-editor-font-family)' }}
            value={rulesText}
            onInput={(e) => setRulesText(e.currentTarget.value)}
          />
          <label class="keel-note" for={`${titleId}-where`}>
            Save in:
          </label>
          <select id={`${titleId}-where`} class="keel-select" data-testid="permission-where" value={where} onChange={(e) => setWhere(e.currentTarget.value as RuleScope)}>
            {RULE_SCOPES.map((s) => (
              <option key={s} value={s}>{SCOPE_LABELS[s]}</option>
            ))}
          </select>
          <div class="keel-note" data-testid="permission-where-file">{`Saved to ${RULE_SCOPE_FILES[where]}`}</div>
          <div class="keel-permission-actions">
            <button type="button" class="keel-button" data-testid="permission-always-save" disabled={rules.length === 0} onClick={() => answer('allowAlways', { rules, where })}>
              <span class="codicon codicon-check-all" aria-hidden="true" /> Save rule and allow
            </button>
            <button type="button" class="keel-button keel-button-secondary" data-testid="permission-always-cancel" onClick={() => setAlways(false)}>
              Back
            </button>
          </div>
        </div>
      ) : (
        <div class="keel-permission-actions">
          <button type="button" class="keel-button" data-testid="permission-allow" onClick={() => answer('allow')}>
            <span class="codicon codicon-check" aria-hidden="true" /> {reviewed ? 'Allow as reviewed' : 'Allow once'}
          </button>
          <button type="button" class="keel-button keel-button-secondary" data-testid="permission-always" onClick={() => setAlways(true)}>
            <span class="codicon codicon-check-all" aria-hidden="true" /> Always allow…
          </button>
          <button type="button" class="keel-button keel-button-secondary" data-testid="permission-deny" onClick={() => answer('deny')}>
            <span class="codicon codicon-close" aria-hidden="true" /> Deny
          </button>
        </div>
      )}
    </section>
  );
}
