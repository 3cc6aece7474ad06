import type { ErrorCode, KeelError } from '../../shared/domain/errors';
import type { PermissionDecision, TaskEvent } from '../../shared/domain/events';
import { attachmentFromText, type AttachedImageInfo, type AttachmentSummary, type MessageAttachment } from '../../shared/domain/attachments';
import type { AttachedImage } from '../machines/task/task.machine';
import { repairConversation } from '../machines/turn/conversation';
import { toolResultText, type AssistantBlock, type ConversationMessage, type StopReason } from '../../shared/domain/messages';

/**
 * What a stored task's log says its model and its tools answered, so a replay can play it back
 * (docs/persistence.md, "Deterministic replay"). Built from the log alone.
 */

/** One model request as recorded: a complete answer, or a failure (a `retry` or `error` event). */
export type RecordedCall =
  | {
      kind: 'answer';
      messageId: string;
      model: string;
      content: AssistantBlock[];
      usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
      stopReason: StopReason;
    }
  | { kind: 'failure'; code: ErrorCode; message: string; retryable: boolean; delayMs?: number; partialText: string; started: { messageId: string; model: string } | null }
  /**
   * A request still in flight when the run was stopped (interrupted, or cancelled by the person):
   * what had streamed by then, in order; played back, it then waits until it is aborted.
   */
  | { kind: 'cut'; started: { messageId: string; model: string } | null; steps: PartialStep[] };

/** What a cut-off answer had streamed: a block started (by the mode it put the stream in), or a delta of the open block. */
export type PartialStep = { kind: 'block'; mode: 'responding' | 'thinking' | 'toolInput' } | { kind: 'text' | 'thinking'; text: string };

export interface RecordedTool {
  /** The tool_result content the model received (text). */
  content: string;
  isError: boolean;
  summary: string;
  outputs: string[];
  /** Still running when the run was stopped (no result recorded): played back, it waits until it is aborted. */
  cut: boolean;
}

/** A message the person sent, as the log has it. */
export interface RecordedPrompt {
  text: string;
  /** What the person typed, when it was not the text sent (a command expanded into it). */
  typed?: string;
  /** What its mentions brought, as the model read it. */
  attachments?: MessageAttachment[];
  /** Its images, as the model read them (the blocks of its conversation record) and as the log names them. */
  images?: AttachedImage[];
  /** Sent while a run was under way: the index of its `queued` event (a replay sends it there). */
  queuedAt?: number;
  /** Its id in the task's queue (a withdrawal names it). */
  queueId?: string;
  /**
   * How many runs had ended when it was sent: by the person after a run's end (not queued; 0 for
   * the first message), or by the machine, for a queued one, when the run it waited for ended.
   */
  afterRuns?: number;
}

export interface Recording {
  /** Every event of the log, in order. */
  events: TaskEvent[];
  /**
   * The user's messages in order: the first starts the task; a later one either followed a run's
   * end (`afterRuns`) or was queued while a run was under way (`queuedAt`; the machine sent it).
   */
  prompts: RecordedPrompt[];
  /** Queued messages the person cancelled: where (the index of the `unqueued` event) and which. */
  withdrawals: { at: number; id: string }[];
  /** How many runs ended (`done` events) in what a replay compares. */
  runsEnded: number;
  /** Model calls keyed by the conversation they were sent with (JSON), in the order made. */
  calls: Map<string, RecordedCall[]>;
  /** What each tool call returned, by tool_use id. */
  tools: Map<string, RecordedTool>;
  /** The engine's decision for each permission check, in order. */
  decisions: { decision: PermissionDecision; reason: string }[];
  /** The person's answer when the engine asked, by tool call id. */
  answers: Map<string, { decision: 'allow' | 'deny'; feedback?: string; deniedBecause?: string }>;
  /**
   * Index of the first event a replay cannot re-create, or -1: the first of what stopping the task
   * recorded (the failed run phase, the lost worker's error, `task interrupted`), or the end of a
   * log whose last run never settled (its process was killed).
   */
  interruptedAt: number;
  /** Why the comparison stops at `interruptedAt`. */
  interruptedBecause: 'interrupted' | 'log-ends';
  /**
   * Where the person cancelled a run (a run that ended `aborted`), in order: the index of the
   * cancel's first effect (the turn loop's `error` state). A replay cancels there too.
   */
  cancels: number[];
  /**
   * Each run's start, in order: null when its provider was made, or the failure that ended the run
   * before any request (no API key…), with the message as the machines had it (without the host's advice).
   */
  runStarts: (KeelError | null)[];
  /** The advice the recording host appended to an error's message, by code (learned from the failures of `runStarts`). */
  advice: Map<ErrorCode, string>;
}

/** The key a request is found by: the conversation it carries. */
export function conversationKey(messages: ConversationMessage[]): string {
  return JSON.stringify(messages);
}

/**
 * Where stopping the task shows in its log: the first event of what an interruption recorded
 * (the run phase failed by the stop, a lost worker's error, then `task interrupted`), or the end
 * of a log whose last run never settled; and the first effect of each cancel (the turn loop's
 * `error` state before `task aborted`).
 */
function stopsOf(events: TaskEvent[]): Pick<Recording, 'interruptedAt' | 'interruptedBecause' | 'cancels'> {
  let interruptedAt = events.findIndex((e) => e.type === 'task' && e.state === 'interrupted');
  let interruptedBecause: Recording['interruptedBecause'] = 'interrupted';
  if (interruptedAt >= 0) {
    const stopEffect = (e: TaskEvent | undefined) => (e?.type === 'phase' && e.phase === 'failed') || (e?.type === 'error' && e.code === 'worker_lost');
    while (interruptedAt > 0 && stopEffect(events[interruptedAt - 1])) interruptedAt--;
  } else {
    // A run that started and never settled: the process ended without recording why (kill -9, power loss).
    let open = false;
    for (const e of events) {
      if (e.type === 'task' && e.state === 'initializing') open = true;
      if (e.type === 'done') open = false;
    }
    if (open) {
      interruptedAt = events.length;
      interruptedBecause = 'log-ends';
    }
  }
  const end = interruptedAt >= 0 ? interruptedAt : events.length;
  const cancels: number[] = [];
  let runStart = 0;
  for (let i = 0; i < end; i++) {
    const e = events[i]!;
    if (e.type === 'task' && e.state === 'running') runStart = i;
    if (e.type !== 'task' || e.state !== 'aborted') continue;
    let at = i;
    for (let j = i - 1; j > runStart; j--) {
      const p = events[j]!;
      if (p.type === 'turn' && p.state === 'error') {
        at = j;
        break;
      }
    }
    cancels.push(at);
  }
  return { interruptedAt, interruptedBecause, cancels };
}

/** Reads the recording out of a log's events. Pure. */
export function recordingOf(events: TaskEvent[]): Recording {
  const stops = stopsOf(events);
  const rec: Recording = { events, prompts: [], withdrawals: [], runsEnded: 0, calls: new Map(), tools: new Map(), decisions: [], answers: new Map(), runStarts: [], advice: new Map(), ...stops };
  const stopAt = new Set(stops.cancels);
  const end = stops.interruptedAt >= 0 ? stops.interruptedAt : events.length;
  let conversation: ConversationMessage[] = [];
  let pendingKey: string | null = null;
  let started: { messageId: string; model: string } | null = null;
  let text: string[] = [];
  let steps: PartialStep[] = [];
  let usage: Extract<RecordedCall, { kind: 'answer' }>['usage'] | null = null;
  let lastAnswer: Extract<RecordedCall, { kind: 'answer' }> | null = null;
  const asked = new Set<string>();
  const running = new Set<string>();
  // The run being started (between `task initializing` and `task running`), and how its failure read.
  let starting = false;
  let startFailure: string | null = null;
  // Queued messages by id, those the machine just sent (their user_message events come next), and
  // the message whose conversation record (with its attachments' text) comes next.
  const queuedById = new Map<string, RecordedPrompt>();
  let sending: RecordedPrompt[] = [];
  let awaitingRecord: { prompt: RecordedPrompt; summaries: AttachmentSummary[]; images: AttachedImageInfo[] } | null = null;
  const push = (key: string, call: RecordedCall) => {
    const q = rec.calls.get(key) ?? [];
    q.push(call);
    rec.calls.set(key, q);
  };
  const fail = (code: ErrorCode, message: string, retryable: boolean, delayMs?: number) => {
    if (pendingKey === null) return;
    push(pendingKey, { kind: 'failure', code, message, retryable, ...(delayMs !== undefined ? { delayMs } : {}), partialText: text.join(''), started });
    pendingKey = null;
    started = null;
    text = [];
  };
  // The run was stopped here: the request in flight and the tools running never finished.
  const cut = () => {
    if (pendingKey !== null) push(pendingKey, { kind: 'cut', started, steps });
    pendingKey = null;
    started = null;
    for (const id of running) rec.tools.get(id)!.cut = true;
    running.clear();
  };
  const startFailed = (e: Extract<TaskEvent, { type: 'error' }>) => {
    // The phase's failure reads "<phase>: <message>": what the error event adds to that is the host's advice.
    const bare = startFailure !== null && e.message.startsWith(startFailure) ? startFailure : e.message;
    const advice = e.message.slice(bare.length).trim();
    if (advice) rec.advice.set(e.code, advice);
    rec.runStarts[rec.runStarts.length - 1] = { code: e.code, message: bare, retryable: e.retryable };
    starting = false;
  };
  for (let i = 0; i < end; i++) {
    const e = events[i]!;
    if (stopAt.has(i)) cut();
    switch (e.type) {
      case 'user_message': {
        const prompt = sending.shift() ?? { text: e.text, ...(e.typed !== undefined ? { typed: e.typed } : {}), afterRuns: rec.runsEnded };
        if (!rec.prompts.includes(prompt)) rec.prompts.push(prompt);
        awaitingRecord = e.attachments?.length || e.images?.length ? { prompt, summaries: e.attachments ?? [], images: e.images ?? [] } : null;
        break;
      }
      case 'queued': {
        const prompt: RecordedPrompt = { text: e.message.text, ...(e.message.typed !== undefined ? { typed: e.message.typed } : {}), queuedAt: i, queueId: e.message.id };
        queuedById.set(e.message.id, prompt);
        rec.prompts.push(prompt);
        break;
      }
      case 'unqueued':
        if (e.outcome === 'sent') {
          sending = e.ids.flatMap((id) => queuedById.get(id) ?? []);
          for (const p of sending) p.afterRuns = rec.runsEnded;
        }
        else if (e.outcome === 'withdrawn') for (const id of e.ids) rec.withdrawals.push({ at: i, id });
        break;
      case 'stream':
        if (e.mode === 'requesting') {
          // As it was sent: the turn repairs what it sends (a call cut off by a cancel gets its result).
          pendingKey = conversationKey(repairConversation(conversation));
          started = null;
          text = [];
          steps = [];
          usage = null;
        } else steps.push({ kind: 'block', mode: e.mode });
        break;
      case 'assistant_start':
        started = { messageId: e.messageId, model: e.model };
        break;
      case 'text':
        text.push(e.delta);
        steps.push({ kind: 'text', text: e.delta });
        break;
      case 'thinking':
        steps.push({ kind: 'thinking', text: e.delta });
        break;
      case 'usage':
        usage = { inputTokens: e.inputTokens, outputTokens: e.outputTokens, cacheReadTokens: e.cacheReadTokens, cacheWriteTokens: e.cacheWriteTokens };
        break;
      case 'retry':
        fail(e.code, e.message, true, e.delayMs);
        break;
      case 'error':
        if (starting) startFailed(e);
        else fail(e.code, e.message, e.retryable);
        break;
      case 'message':
        if (e.message.role === 'assistant' && pendingKey !== null && started) {
          const content = e.message.content;
          lastAnswer = {
            kind: 'answer',
            messageId: started.messageId,
            model: started.model,
            content,
            usage: usage ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
            stopReason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
          };
          push(pendingKey, lastAnswer);
          pendingKey = null;
          started = null;
        } else if (e.message.role === 'user') {
          if (awaitingRecord) {
            // Its images first, then its text, then one block per attachment (attachments.ts,
            // task.machine.ts userMessageOf): what the model read.
            const { prompt, summaries, images: named } = awaitingRecord;
            const images = named.flatMap((info, k) => {
              const b = e.message.content[k];
              return b?.type === 'image' ? [{ block: b, info }] : [];
            });
            if (images.length > 0) prompt.images = images;
            const blocks = e.message.content.slice(named.length + 1);
            const attachments = summaries.flatMap((summary, k) => {
              const b = blocks[k];
              return (b?.type === 'text' && attachmentFromText(summary, b.text)) || [];
            });
            if (attachments.length > 0) prompt.attachments = attachments;
            awaitingRecord = null;
          }
          for (const b of e.message.content) {
            if (b.type !== 'tool_result') continue;
            const t = rec.tools.get(b.tool_use_id);
            if (t) t.content = toolResultText(b);
          }
        }
        conversation = [...conversation, e.message];
        break;
      case 'compacted':
        conversation = e.messages.slice();
        break;
      case 'tool_call':
        rec.tools.set(e.id, { content: '', isError: false, summary: '', outputs: [], cut: false });
        running.add(e.id);
        break;
      case 'tool_output':
        rec.tools.get(e.id)?.outputs.push(e.chunk);
        break;
      case 'tool_result': {
        running.delete(e.id);
        const t = rec.tools.get(e.id);
        if (t) {
          t.isError = e.is_error;
          t.summary = e.summary;
        }
        break;
      }
      case 'permission':
        if (asked.has(e.toolCallId)) {
          // A denial nobody answered (headless) carries what denied it; a person's is "denied by the user".
          const unattended = e.decision === 'deny' && e.reason !== undefined && e.reason !== 'denied by the user';
          if (e.decision !== 'ask') rec.answers.set(e.toolCallId, { decision: e.decision, ...(unattended ? { deniedBecause: e.reason } : {}) });
          break;
        }
        asked.add(e.toolCallId);
        rec.decisions.push({ decision: e.decision, reason: e.reason ?? '' });
        break;
      case 'phase':
        if (starting && e.phase === 'failed' && e.failure) startFailure = e.failure.slice(e.failure.indexOf(': ') + 2);
        break;
      case 'done':
        // The stop reason of a run's last answer is the run's (max_tokens, refusal…).
        if (lastAnswer && e.stopReason) lastAnswer.stopReason = e.stopReason;
        lastAnswer = null;
        starting = false;
        rec.runsEnded += 1;
        break;
      case 'task':
        if (e.state === 'initializing') {
          rec.runStarts.push(null);
          starting = true;
          startFailure = null;
        } else if (e.state === 'running') starting = false;
        break;
      default:
        break;
    }
  }
  if (stops.interruptedAt >= 0) cut();
  // A denial's feedback is in the tool result the model received.
  for (const [id, answer] of rec.answers) {
    const content = rec.tools.get(id)?.content;
    if (answer.decision !== 'deny' || !content) continue;
    if (answer.deniedBecause !== undefined) {
      const head = `Permission denied: ${answer.deniedBecause}.\n\n`;
      if (content.startsWith(head)) answer.feedback = content.slice(head.length);
      continue;
    }
    const m = /^The user denied this \w+ call\.(?: Feedback: ([\s\S]*))?$/.exec(content);
    if (m?.[1]) answer.feedback = m[1];
  }
  // A replay adds the host's advice again (ReplayOptions: the runtime's `advise`): a failure played
  // back carries the message without it.
  for (const q of rec.calls.values()) {
    for (const call of q) {
      const advice = call.kind === 'failure' ? rec.advice.get(call.code) : undefined;
      if (call.kind === 'failure' && advice && call.message.endsWith(` ${advice}`)) call.message = call.message.slice(0, -advice.length - 1);
    }
  }
  return rec;
}
