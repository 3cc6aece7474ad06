import type { AnyMachineSnapshot } from 'xstate';
import { ZERO_USAGE, type AssistantBlock, type ConversationMessage, type StopReason } from '../../../src/shared/domain/messages';
import type { ProviderEvent } from '../../../src/core/providers/types';
import { userText } from '../../../src/core/machines/turn/conversation';
import { turnMachine } from '../../../src/core/machines/turn/turn.machine';
import { end, midStreamError, start, textBlock, textTurn, toolTurn } from '../helpers/scriptedEvents';
import { dedupe, doneEvent, errorEvent, transitionPaths, type ModelEvent, type ModelPath } from './paths';
import { emptyScript, LIMITS, TASK_ID, type Script, type Trigger } from './system';

/**
 * The turn machine's model. Its events are the completions of what it invokes, each with the
 * outputs its actors can produce (a model call that ends end_turn / tool_use / max_tokens /
 * pause_turn, fails retryably or not, is a duplicate or times out on the lock; a validation that
 * finds a valid call (a read, a subtask, an MCP tool), an invalid one, or fails; a permission
 * allow / deny / failure; the budget letting a request go, refusing it, failing; ...), plus CANCEL and the backoff timer. Three limit variants make the
 * context guards reachable (over the context limit; one model call allowed). A path compiles to
 * a script for the wired task system: what the provider streams, what the person answers the
 * real permission engine's prompts, whether the subtask finishes, and when CANCEL is sent; a
 * path that needs what no real part produces (an MCP tool, a failing validation, permission
 * check or tool run) injects the turn's tool pipeline instead. An MCP tool is real: the path's
 * MCP calls go to a real stdio server through a real hub (system.ts `mcp`).
 */
export interface TurnVariant {
  name: string;
  limits: { contextLimit?: number; maxTurns?: number };
  /** The conversation the task starts with (a rebuilt task); default: none. */
  messages?: ConversationMessage[];
  /** Keeps only the paths this variant exists for (the rest repeat the roomy variant). */
  only?: (tags: string[]) => boolean;
}

/** A rebuilt task whose last answer asked for a subtask that has not answered yet. */
const REBUILT_WITH_SUBTASK: ConversationMessage[] = [
  userText('delegate'),
  { role: 'assistant', content: [{ type: 'tool_use', id: 'k0', name: 'Task', input: { description: 'd', prompt: 'p' } }] },
];

export const TURN_VARIANTS: TurnVariant[] = [
  { name: 'roomy', limits: {} },
  { name: 'over-context', limits: { contextLimit: 0 } },
  { name: 'one-call', limits: { maxTurns: 1 } },
  {
    name: 'rebuilt-with-subtask',
    limits: {},
    messages: REBUILT_WITH_SUBTASK,
    // preparing → validatingInput (the adopted Task call) → permissionCheck → startingSubtask → awaitingSubtasks → its result → an answer.
    only: (tags) => tags.join(' ') === 'preparing:ok validatingInput:task permissionCheck:allow SUBTASK_RESULT streaming.admittingRequest:ok streaming.requesting:end',
  },
];

const ok = (stopReason: StopReason, content: AssistantBlock[]) => ({ ok: true, messageId: 'm', model: 'test-model', message: { role: 'assistant', content }, stopReason, usage: ZERO_USAGE, truncatedToolUses: [], invalidToolUses: [] });
const CALL_OUTPUTS: [string, unknown][] = [
  ['end', ok('end_turn', [{ type: 'text', text: 'answer' }])],
  ['tool', ok('tool_use', [{ type: 'tool_use', id: 'tu1', name: 'Read', input: { file_path: 'a.txt' } }])],
  ['task', ok('tool_use', [{ type: 'tool_use', id: 'k1', name: 'Task', input: { description: 'd', prompt: 'p' } }])],
  ['max', ok('max_tokens', [{ type: 'text', text: 'cut' }])],
  ['pause', ok('pause_turn', [{ type: 'text', text: 'paused' }])],
  ['retry', { ok: false, error: { code: 'overloaded', message: 'Overloaded', retryable: true, phase: 'mid-stream' }, partialText: '', usage: ZERO_USAGE }],
  ['fatal', { ok: false, error: { code: 'auth_failed', message: 'bad key', retryable: false, phase: 'pre-stream' }, partialText: '', usage: ZERO_USAGE }],
];

interface TurnCtx {
  limits: { contextLimit: number };
  modelCalls: number;
  attempt: number;
  compactionFailures: number;
  index: number;
  pending: { id: string; name: string }[];
  subtasks: string[];
  validated: { subject: { kind: string } } | null;
  maxTokensContinued: boolean;
  error: { code: string } | null;
}

const validated = (kind: 'read' | 'task' | 'mcp') => ({
  ok: true,
  call: { id: 'tu1', tool: kind === 'read' ? 'Read' : kind === 'task' ? 'Task' : 'mcp__srv__tool', input: {}, subject: { kind, tool: 'T', paths: [], server: 's', summary: kind }, readOnly: kind !== 'mcp', requestId: 'q' },
});

function events(s: AnyMachineSnapshot): ModelEvent[] {
  const c = s.context as TurnCtx;
  const out: ModelEvent[] = [];
  for (const node of s._nodes) {
    for (const inv of node.invoke) {
      const id = inv.id;
      switch (inv.src) {
        case 'admit':
          // The task's budget: the request may go, may not (the task pauses for its budget), or its owner fails.
          out.push(doneEvent(id, null, 'ok'), doneEvent(id, { capUsd: 1, spentUsd: 0.9, estimateUsd: 0.5 }, 'refused'), errorEvent(id, new Error('x')));
          break;
        case 'prepareSystemPrompt':
          out.push(doneEvent(id, { system: [], tools: [] }, 'ok'), errorEvent(id, new Error('x')));
          break;
        case 'summarize':
          out.push(doneEvent(id, { text: 'summary', usage: ZERO_USAGE }, 'ok'), errorEvent(id, new Error('x')));
          break;
        case 'modelCall':
          for (const [tag, output] of CALL_OUTPUTS) out.push(doneEvent(id, output, tag));
          // Replayed by pre-registering the first continuation / holding the task lock from the
          // start, so offered for the first request only (and not after a compaction, which
          // needs the same lock).
          if (c.modelCalls === 0 && c.attempt === 1 && c.limits.contextLimit > 0) out.push(doneEvent(id, { ok: false, duplicate: true }, 'duplicate'), doneEvent(id, { ok: false, timeout: true }, 'timeout'));
          out.push({ type: 'CANCEL' });
          break;
        case 'validateToolCall': {
          const call = c.pending[c.index];
          if (call?.name === 'Task') out.push(doneEvent(id, validated('task'), 'task'));
          else {
            out.push(
              doneEvent(id, validated('read'), 'valid'),
              doneEvent(id, validated('mcp'), 'mcp'),
              doneEvent(id, { ok: false, result: { type: 'tool_result', tool_use_id: 'tu1', content: 'bad', is_error: true }, summary: 'invalid' }, 'invalid'),
              errorEvent(id, new Error('x')),
            );
          }
          break;
        }
        case 'permission': {
          // The real engine allows every subtask (it asks for its own permissions).
          out.push(doneEvent(id, { decision: 'allow', reason: 'r', requestId: 'q' }, 'allow'));
          if (c.validated?.subject.kind !== 'task') {
            out.push(
              doneEvent(id, { decision: 'deny', reason: 'r', requestId: 'q', result: { type: 'tool_result', tool_use_id: 'tu1', content: 'no', is_error: true } }, 'deny'),
              errorEvent(id, new Error('x')),
            );
          }
          break;
        }
        case 'stopHook':
          // 'stop' is what a run without a blocking Stop hook does; the others are injected.
          out.push(doneEvent(id, { continueWith: null }, 'stop'), doneEvent(id, { continueWith: 'go on' }, 'continue'), errorEvent(id, new Error('x')));
          break;
        case 'runTool':
        case 'callMcpTool':
          out.push(doneEvent(id, { result: { type: 'tool_result', tool_use_id: 'tu1', content: 'ran' }, summary: 'ran' }, 'ok'), errorEvent(id, new Error('x')));
          break;
      }
    }
  }
  if (s.matches('awaitingSubtasks')) out.push({ type: 'SUBTASK_RESULT', toolCallId: c.subtasks[0] ?? '', result: { type: 'tool_result', tool_use_id: c.subtasks[0] ?? '', content: 'sub' }, summary: 's' });
  if (s.matches({ streaming: 'backoff' })) out.push({ type: 'xstate.after.retryDelay.turn.streaming.backoff' });
  return out;
}

export function turnPaths(variant: TurnVariant): ModelPath[] {
  const paths = transitionPaths(turnMachine, {
    input: { taskId: TASK_ID, model: 'test-model', mode: 'default', messages: [...(variant.messages ?? []), userText('hi')], limits: { ...LIMITS, ...variant.limits }, compactionFailures: 0, run: 1 },
    events,
    context: (s) => {
      const c = s.context as TurnCtx;
      return [c.modelCalls, c.attempt, c.compactionFailures, c.index, c.pending.map((p) => p.name), c.subtasks.length, c.validated?.subject.kind ?? null, c.maxTokensContinued, c.error?.code ?? null];
    },
  });
  if (!variant.only) return paths;
  const tag = (e: ModelPath['events'][number]) => (e.type.startsWith('xstate.done.actor.0.turn.') ? `${e.type.slice('xstate.done.actor.0.turn.'.length)}:${e.tag ?? ''}` : e.type);
  return paths.filter((p) => variant.only!(p.events.map(tag)));
}

const fatal: ProviderEvent[] = [start(), { type: 'provider_error', error: { code: 'auth_failed', message: 'bad key (scripted)', phase: 'mid-stream', retryable: false } }];
const VALIDATING = 'xstate.done.actor.0.turn.validatingInput';
const VALIDATION_FAILED = 'xstate.error.actor.0.turn.validatingInput';
const DECIDED = 'xstate.done.actor.0.turn.permissionCheck';
const DECISION_FAILED = 'xstate.error.actor.0.turn.permissionCheck';
/** What no real part produces here: a validation, permission check, tool run or MCP call that fails, a Stop hook's answer. */
const NEEDS_INJECTION = [
  VALIDATION_FAILED,
  DECISION_FAILED,
  'xstate.error.actor.0.turn.executingTool',
  // runMcpCall never rejects: a failed or crashed call is a result (the hub's words).
  'xstate.error.actor.0.turn.mcpCall',
  // A Stop hook that sends the agent back, or whose runner fails: no hook runs in these replays.
  'xstate.done.actor.0.turn.stopping[continue]',
  'xstate.error.actor.0.turn.stopping',
];

/** Position of values[i] in the deduplicated sequence. */
export function dedupIndex(values: unknown[], i: number): number {
  return dedupe(values.slice(0, i + 1) as never).length - 1;
}

export function compileTurn(path: ModelPath, variant: TurnVariant): { script: Script; triggers: Trigger[]; expected: string[]; prefixOk: boolean } {
  const script = emptyScript();
  script.init = ['ok'];
  script.limits = { ...variant.limits };
  const triggers: Trigger[] = [];
  const tags = path.events.map((e) => `${e.type}[${e.tag ?? ''}]`);
  if (variant.messages) {
    // The adopted subtask comes first: it answers when the path's first SUBTASK_RESULT precedes
    // any subtask the model asks for.
    const firstResult = path.events.findIndex((e) => e.type === 'SUBTASK_RESULT');
    const firstTask = path.events.findIndex((e) => e.type.startsWith('xstate.done.actor.0.turn.streaming.requesting') && e.tag === 'task');
    script.subtasks.push(firstResult >= 0 && (firstTask < 0 || firstResult < firstTask) ? 'resolve' : 'hang');
  }
  const inject = tags.some((t) => NEEDS_INJECTION.some((n) => t.includes(n)));
  const pipeline = { validate: [] as ('read' | 'task' | 'mcp' | 'invalid' | 'reject')[], permission: [] as ('allow' | 'deny' | 'reject')[], runTool: [] as ('ok' | 'reject')[], mcp: [] as ('ok' | 'reject')[] };
  const stopHook = [] as ('stop' | 'continue' | 'reject')[];
  if (inject) script.injected = { pipeline, stopHook };
  /** The outcome of the validation and of the permission check that follow the model call at i. */
  const toolOutcomes = (i: number) => {
    const v = path.events[i + 1];
    const p = path.events[i + 2];
    const validation = v?.type.startsWith(VALIDATING) ? v.tag! : v?.type.startsWith(VALIDATION_FAILED) ? 'error' : 'none';
    const decision = validation === 'none' || validation === 'error' || validation === 'invalid' ? 'none' : p?.type.startsWith(DECIDED) ? p.tag! : p?.type.startsWith(DECISION_FAILED) ? 'error' : 'none';
    return { validation, decision };
  };
  path.events.forEach((e, i) => {
    const t = e.type;
    if (t.includes('.admittingRequest') || t.includes('.admittingSummary')) script.admit.push(t.startsWith('xstate.error') ? 'reject' : e.tag === 'refused' ? 'refuse' : 'ok');
    else if (t.startsWith('xstate.error.actor.0.turn.preparing')) script.prepareFails.push(true);
    else if (t.startsWith('xstate.done.actor.0.turn.preparing')) script.prepareFails.push(false);
    else if (t.startsWith('xstate.done.actor.0.turn.compacting')) script.provider.push({ events: textTurn('summary of the conversation') });
    else if (t.startsWith('xstate.error.actor.0.turn.compacting')) script.provider.push({ events: fatal });
    else if (t === 'CANCEL') {
      script.provider.push({ events: [], hang: true });
      triggers.push({ at: dedupIndex(path.values, i), send: { type: 'CANCEL' } , whenHung: true });
    } else if (t.startsWith('xstate.done.actor.0.turn.streaming.requesting')) {
      switch (e.tag) {
        case 'end':
          script.provider.push({ events: textTurn('answer') });
          break;
        case 'max':
          script.provider.push({ events: [start(), ...textBlock(0, 'cut off'), ...end('max_tokens')] });
          break;
        case 'pause':
          script.provider.push({ events: [start(), ...textBlock(0, 'paused'), ...end('pause_turn')] });
          break;
        case 'retry':
          script.provider.push({ events: midStreamError() });
          break;
        case 'fatal':
          script.provider.push({ events: fatal });
          break;
        case 'duplicate':
          script.duplicateKeys.push(`${TASK_ID}:r1:c0:h1:a1`);
          break;
        case 'timeout':
          script.holdLock = true;
          script.limits.lockTimeoutMs = 20;
          break;
        case 'task': {
          script.provider.push({ events: toolTurn(`k${i}`, 'Task', { description: 'd', prompt: 'p' }) });
          script.subtasks.push(path.events[i + 3]?.type === 'SUBTASK_RESULT' ? 'resolve' : 'hang');
          const o = toolOutcomes(i);
          if (o.validation === 'task') pipeline.validate.push('task');
          if (o.decision === 'allow') pipeline.permission.push('allow');
          break;
        }
        case 'tool': {
          const o = toolOutcomes(i);
          if (inject) {
            script.provider.push({ events: toolTurn(`t${i}`, 'Read', { file_path: 'a.txt' }) });
            const v = ({ valid: 'read', mcp: 'mcp', invalid: 'invalid', error: 'reject' } as const)[o.validation as 'valid'];
            if (v) pipeline.validate.push(v);
            const p = ({ allow: 'allow', deny: 'deny', error: 'reject' } as const)[o.decision as 'allow'];
            if (p) pipeline.permission.push(p);
          } else if (o.validation === 'mcp') {
            // A real MCP server's tool: `echo` is allowed by the workspace's rule; `slow` asks,
            // and the person denies it, or the prompt stays open where the path ends.
            script.mcp = true;
            if (o.decision === 'allow') script.provider.push({ events: toolTurn(`t${i}`, 'mcp__mbt__echo', { message: `m${i}` }) });
            else {
              script.provider.push({ events: toolTurn(`t${i}`, 'mcp__mbt__slow', { ms: 1 }) });
              if (o.decision === 'deny') script.asker.push('deny');
            }
          } else if (o.validation === 'invalid') script.provider.push({ events: toolTurn(`t${i}`, 'Read', { wrong: 1 }) });
          else if (o.decision === 'allow' || o.validation === 'none') script.provider.push({ events: toolTurn(`t${i}`, 'Read', { file_path: 'a.txt' }) });
          else {
            // The real engine asks before `touch` runs; the person answers, or the prompt stays open.
            script.provider.push({ events: toolTurn(`t${i}`, 'Bash', { command: 'touch b.txt' }) });
            if (o.decision === 'deny') script.asker.push('deny');
          }
          break;
        }
      }
    } else if (inject && t.includes('turn.executingTool')) pipeline.runTool.push(t.startsWith('xstate.error') ? 'reject' : 'ok');
    else if (inject && t.includes('turn.mcpCall')) pipeline.mcp.push(t.startsWith('xstate.error') ? 'reject' : 'ok');
    else if (inject && t.includes('turn.stopping')) stopHook.push(t.startsWith('xstate.error') ? 'reject' : e.tag === 'continue' ? 'continue' : 'stop');
  });
  // The backoff timer is real: a path that stops in backoff goes on to request again.
  const last = JSON.stringify(path.values.at(-1));
  // Real parts that finish at once cannot be held where a path ends: the backoff timer, a
  // validation, a permission the engine decides without asking (a Task call), a real tool run
  // (a Read). The path is then a prefix.
  const lastTag = path.events.at(-1)?.tag;
  const prefixOk =
    path.events.length === 0 ||
    last === JSON.stringify({ streaming: 'backoff' }) ||
    // The budget answers at once: a request admitted goes.
    last === JSON.stringify({ streaming: 'admittingRequest' }) ||
    last === JSON.stringify({ compacting: 'admittingSummary' }) ||
    (!inject && (last === '"executingTool"' || last === '"validatingInput"' || last === '"mcpCall"')) ||
    // Without Stop hooks the real stop point lets the answer stop at once.
    (!inject && last === '"stopping"') ||
    (!inject && last === '"permissionCheck"' && lastTag === 'task');
  return { script, triggers, expected: dedupe(path.values), prefixOk };
}
