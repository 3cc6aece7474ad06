import { assign, fromPromise, setup } from 'xstate';
import type { TaskEvent } from '../../../shared/domain/events';
import type { ToolResultBlock } from '../../../shared/domain/messages';
import type { PermissionMode } from '../../../shared/domain/permissionModes';
import type { EngineDecision } from '../../permissions/engine';
import type { PermissionAnswer, PermissionRequest } from '../../permissions/gate';
import { refusalOfChange } from '../../permissions/modes';
import type { PermissionSubject } from '../../tools/types';

/**
 * One permission decision for one tool call whose input is valid (the catalog's permission
 * machine; the turn's `permissionCheck` state invokes it after `validatingInput`):
 * checkMode (a mode that makes no changes refuses a tool that can only change things before any
 * rule is read; a command's read-only-ness is the engine's judgement, so Bash goes on to the
 * rules) → checkRules (the engine: deny rules, ask rules, the mode, allow rules) → allowOnce |
 * deny, or askUser (the host's prompt; headless, a denying asker) → allowOnce | allowAlways | deny.
 * Its output is what the turn machine acts on; a denial carries the tool_result the model gets.
 */
export type PermissionOutcome =
  | { decision: 'allow'; reason: string; requestId: string }
  | { decision: 'deny'; reason: string; requestId: string; result: ToolResultBlock };

export interface PermissionInput {
  taskId: string;
  requestId: string;
  toolCallId: string;
  tool: string;
  input: unknown;
  subject: PermissionSubject;
  readOnly: boolean;
  mode: PermissionMode;
}

interface PermissionContext extends PermissionInput {
  reason: string;
  rule: string | undefined;
  risky: boolean;
  feedback: string | undefined;
  verdict: 'allowOnce' | 'allowAlways' | 'deny';
}

export const permissionMachine = setup({
  types: {
    context: {} as PermissionContext,
    input: {} as PermissionInput,
    output: {} as PermissionOutcome,
  },
  actors: {
    /** The rule engine (src/core/permissions), with a run's PreToolUse hooks in front (they see `toolCallId`). Provided by the runtime. */
    evaluate: fromPromise<EngineDecision, { call: Pick<PermissionInput, 'tool' | 'input' | 'subject' | 'readOnly'>; mode: PermissionMode; toolCallId: string }>(async () => ({
      decision: 'ask',
      reason: 'no permission engine wired',
    })),
    /**
     * The host's prompt. Provided by the runtime (the extension's broker, or the CLI's denying
     * asker), which adds what "Always allow" would save.
     */
    askUser: fromPromise<PermissionAnswer, PermissionRequest & { readOnly: boolean }>(async () => ({ decision: 'deny', deniedBecause: 'no one to ask is wired' })),
  },
  actions: {
    publish: (_: unknown, _event: TaskEvent | null) => {},
  },
  guards: {
    // A tool that is not read-only changes things, except a command, which the engine analyses:
    // plan mode allows `git status` and denies `npm install` (combine() in permissions/engine.ts).
    modeRefusesChange: ({ context }) => context.subject.kind !== 'execute' && refusalOfChange(context.mode, context.readOnly) !== null,
    decided: (_, p: { decision: EngineDecision; is: EngineDecision['decision'] }) => p.decision.decision === p.is,
    answeredAlways: (_, p: { answer: PermissionAnswer }) => p.answer.decision === 'allow' && Boolean(p.answer.always),
    answeredAllow: (_, p: { answer: PermissionAnswer }) => p.answer.decision === 'allow',
  },
}).createMachine({
  id: 'permission',
  context: ({ input }) => ({ ...input, reason: '', rule: undefined, risky: false, feedback: undefined, verdict: 'deny' }),
  initial: 'checkMode',
  states: {
    checkMode: {
      always: [
        { guard: 'modeRefusesChange', target: 'deny', actions: assign({ reason: ({ context }) => refusalOfChange(context.mode, context.readOnly)?.reason ?? '' }) },
        { target: 'checkRules' },
      ],
    },
    checkRules: {
      invoke: {
        src: 'evaluate',
        input: ({ context }) => ({ call: { tool: context.tool, input: context.input, subject: context.subject, readOnly: context.readOnly }, mode: context.mode, toolCallId: context.toolCallId }),
        onDone: [
          { guard: { type: 'decided', params: ({ event }) => ({ decision: event.output, is: 'allow' }) }, target: 'allowOnce', actions: assign(({ event }) => decisionFields(event.output)) },
          { guard: { type: 'decided', params: ({ event }) => ({ decision: event.output, is: 'deny' }) }, target: 'deny', actions: assign(({ event }) => decisionFields(event.output)) },
          { target: 'askUser', actions: assign(({ event }) => decisionFields(event.output)) },
        ],
        // The engine never throws; if it does, asking is the safe answer (it never widens).
        onError: { target: 'askUser', actions: assign({ reason: ({ event }) => `the permission engine failed (${event.error instanceof Error ? event.error.message : String(event.error)})` }) },
      },
    },
    askUser: {
      entry: { type: 'publish', params: ({ context }) => askEvent(context) },
      invoke: {
        src: 'askUser',
        input: ({ context }) => ({
          requestId: context.requestId,
          taskId: context.taskId,
          toolCallId: context.toolCallId,
          tool: context.tool,
          input: context.input,
          subject: context.subject,
          reason: context.reason,
          mode: context.mode,
          readOnly: context.readOnly,
          ...(context.rule ? { rule: context.rule } : {}),
          ...(context.risky ? { risky: true } : {}),
        }),
        onDone: [
          { guard: { type: 'answeredAlways', params: ({ event }) => ({ answer: event.output }) }, target: 'allowAlways', actions: assign({ reason: 'always allowed by the user' }) },
          { guard: { type: 'answeredAllow', params: ({ event }) => ({ answer: event.output }) }, target: 'allowOnce', actions: assign({ reason: 'allowed by the user' }) },
          // Nobody answered (headless): the asker says what denied it; else the person did.
          { target: 'deny', actions: assign({ reason: ({ event }) => event.output.deniedBecause ?? 'denied by the user', feedback: ({ event }) => event.output.feedback }) },
        ],
        onError: { target: 'deny', actions: assign({ reason: 'the permission prompt failed' }) },
      },
    },
    allowOnce: { type: 'final', entry: assign({ verdict: 'allowOnce' }) },
    allowAlways: { type: 'final', entry: assign({ verdict: 'allowAlways' }) },
    deny: { type: 'final', entry: assign({ verdict: 'deny' }) },
  },
  output: ({ context }) => outcome(context),
});

function askEvent(c: PermissionContext): TaskEvent {
  return { type: 'permission', taskId: c.taskId, requestId: c.requestId, toolCallId: c.toolCallId, tool: c.tool, decision: 'ask', reason: c.reason };
}

function decisionFields(d: EngineDecision): Partial<PermissionContext> {
  return { reason: d.rule ? `${d.reason} (rule ${d.rule})` : d.reason, rule: d.rule, risky: Boolean(d.risky) };
}

function outcome(c: PermissionContext): PermissionOutcome {
  if (c.verdict !== 'deny') return { decision: 'allow', reason: c.reason, requestId: c.requestId };
  const byUser = c.reason === 'denied by the user';
  const content = byUser ? `The user denied this ${c.tool} call.${c.feedback ? ` Feedback: ${c.feedback}` : ''}` : `Permission denied: ${c.reason}.${c.feedback ? `\n\n${c.feedback}` : ''}`;
  const result: ToolResultBlock = { type: 'tool_result', tool_use_id: c.toolCallId, content, is_error: true };
  return { decision: 'deny', reason: c.reason, requestId: c.requestId, result };
}
