import { join } from 'node:path';
import type { StepKind } from '../../shared/domain/checkpoints';
import type { TaskEvent } from '../../shared/domain/events';
import type { AssistantBlock, ConversationMessage, ToolResultBlock, ToolUseBlock } from '../../shared/domain/messages';
import type { TranscriptItem } from '../../shared/domain/transcript';
import { readLog } from '../store/logReader';
import { TranscriptBuilder } from '../store/transcriptBuilder';
import type { LogHeader, LogRecord } from '../store/types';

/**
 * A task's steps as its log records them: each user message, each tool call and each rewind (a
 * fork's own start counts as one, in the fork), in order, numbered from 1 — the numbers `keel tasks checkpoints` prints and `--to`/`--at` take.
 * "Before step N" is the moment just before that message was sent, that tool started, or that
 * rewind was made: the conversation, the chat and the files as they were then.
 */
export interface Step {
  number: number;
  kind: StepKind;
  /** The user message's, tool call's or rewind's id. */
  id: string;
  /** Index of the step's record among the log's event records (0-based). */
  record: number;
  at: number;
  /** One line for people: the message's first line, the tool and its main input, the rewind. */
  label: string;
  tool?: string;
  /** A user message's whole text, as the person typed it (what a rewind gives back to the composer). */
  text?: string;
}

export interface Timeline {
  header: LogHeader;
  records: LogRecord[];
  steps: Step[];
}

/** Reads a task's log (`tasks/<id>/events.jsonl` under `taskDir`) into its steps. */
export async function readTimeline(taskDir: string): Promise<Timeline> {
  const records: LogRecord[] = [];
  const r = await readLog(join(taskDir, 'events.jsonl'), (rec) => records.push(rec));
  return { header: r.header, records, steps: stepsOf(records) };
}

export function stepsOf(records: LogRecord[]): Step[] {
  const steps: Step[] = [];
  records.forEach((rec, record) => {
    const e = rec.event;
    const base = { number: steps.length + 1, record, at: rec.at };
    // A message is named, and given back by a rewind, as the person typed it (`/review a.ts`), not as a command expanded it.
    if (e.type === 'user_message') steps.push({ ...base, kind: 'message', id: e.id, label: firstLine(e.typed ?? e.text), text: e.typed ?? e.text });
    else if (e.type === 'tool_call') steps.push({ ...base, kind: 'tool', id: e.id, tool: e.name, label: `${e.name} ${mainInput(e.input)}`.trim() });
    else if (e.type === 'rewind' && !e.forkedTo) steps.push({ ...base, kind: 'rewind', id: e.id, label: e.label });
  });
  return steps;
}

/** The step numbered `n`, or undefined. */
export function stepAt(t: Timeline, n: number): Step | undefined {
  return t.steps[n - 1];
}

/** The record index of each step's id (tool calls, rewinds): where a checkpoint record sits in the log. */
export function positionsOf(t: Timeline): Map<string, number> {
  return new Map(t.steps.map((s) => [s.id, s.record]));
}

/**
 * The conversation just before `step`: for a message or a rewind, everything recorded before it;
 * for a tool call, the answer that made the call cut just before it (its text and the calls
 * before it, with their results), so the model goes on from the moment that tool would have run.
 */
export function conversationBefore(t: Timeline, step: Step): ConversationMessage[] {
  let conv: ConversationMessage[] = [];
  for (let k = 0; k < step.record; k++) {
    const e = t.records[k]!.event;
    if (e.type === 'message') conv.push(e.message);
    else if (e.type === 'compacted') conv = e.messages.slice();
  }
  if (step.kind !== 'tool') return conv;
  let at = -1;
  for (let k = conv.length - 1; k >= 0; k--) {
    const m = conv[k]!;
    if (m.role === 'assistant' && m.content.some((b) => b.type === 'tool_use' && b.id === step.id)) {
      at = k;
      break;
    }
  }
  if (at < 0) return conv;
  const answer = conv[at]!;
  if (answer.role !== 'assistant') return conv;
  const cut = answer.content.findIndex((b) => b.type === 'tool_use' && b.id === step.id);
  const kept: AssistantBlock[] = answer.content.slice(0, cut);
  const earlier = kept.filter((b): b is ToolUseBlock => b.type === 'tool_use').map((b) => b.id);
  const results = resultsAfter(t, step.record, earlier);
  // A call before the cut whose result was never recorded is left out with it.
  const answered = kept.filter((b) => b.type !== 'tool_use' || results.has(b.id));
  const out = conv.slice(0, at);
  if (answered.length) out.push({ role: 'assistant', content: answered });
  const resultBlocks = earlier.filter((id) => results.has(id)).map((id) => results.get(id)!);
  if (resultBlocks.length) out.push({ role: 'user', content: resultBlocks });
  return out;
}

/** The results of `ids` recorded after `from` (the user message that answered the calls). */
function resultsAfter(t: Timeline, from: number, ids: string[]): Map<string, ToolResultBlock> {
  const want = new Set(ids);
  const out = new Map<string, ToolResultBlock>();
  for (let k = from; k < t.records.length && out.size < want.size; k++) {
    const e = t.records[k]!.event;
    if (e.type !== 'message' || e.message.role !== 'user') continue;
    for (const b of e.message.content) if (b.type === 'tool_result' && want.has(b.tool_use_id) && !out.has(b.tool_use_id)) out.set(b.tool_use_id, b);
  }
  return out;
}

/** The chat's items just before `step` (what a rewind of the conversation shows again). */
export function itemsBefore(t: Timeline, step: Step): TranscriptItem[] {
  const b = new TranscriptBuilder(t.header.taskId, t.header.title ?? '', t.header.model ?? '');
  for (let k = 0; k < step.record; k++) b.apply(t.records[k]!.event);
  b.markInterrupted();
  return b.build().items;
}

/** The events of the log before `step`, for a fork: its chat and conversation up to there. */
export function eventsBefore(t: Timeline, step: Step): TaskEvent[] {
  return t.records.slice(0, step.record).map((r) => r.event);
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 70 ? `${line.slice(0, 69)}…` : line;
}

const MAIN_KEYS = ['file_path', 'command', 'path', 'pattern', 'url', 'description'];

function mainInput(input: Record<string, unknown>): string {
  for (const k of MAIN_KEYS) {
    const v = input[k];
    if (typeof v === 'string' && v) return v.length > 60 ? `${v.slice(0, 59)}…` : v.split('\n')[0]!;
  }
  return '';
}
