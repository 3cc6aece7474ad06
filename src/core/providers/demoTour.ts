import { toolResultText, type ConversationMessage, type ToolResultBlock, type ToolUseBlock } from '../../shared/domain/messages';

/**
 * The demo model's tour, as decisions: given the conversation a request carries, which step comes
 * next. Pure and deterministic; the words and tool calls of each step are in demo.ts. The tour
 * knows nothing but the conversation (no file access, no side channel): what it read, and
 * whether its edit and its command were allowed, denied or refused by the mode, it learns from
 * the tool results Keel sends back, exactly as a real model would.
 *
 *   prompt → intro (Read the sample file) → edit (Edit it; or Write a note when the file is not
 *   there) → command (Bash) → wrapUp.   In Plan mode the edit is refused: planStop ends the tour.
 *   A later prompt gets a short answer, or the tour again when it asks for it.
 */

/** The file of the sample workspace (examples/sample-workspace) the tour reads and edits. */
export const TOUR_FILE = 'src/greet.ts';
/** The note the tour writes instead, in a workspace without {@link TOUR_FILE}. */
export const TOUR_NOTE_FILE = 'KEEL-DEMO.md';
/**
 * A harmless command that is not read-only, so Keel asks before running it (`node --version` is
 * read-only and would run unasked; `node -p` evaluates code). The permission corpus holds it at ask.
 */
export const TOUR_COMMAND = 'node -p process.version';
/** The line of the sample's greet() the edit goes before. */
export const TOUR_ANCHOR = "  const tone = options.tone ?? 'casual';";
/** The lines the edit adds (and a later tour takes out again). */
export const TOUR_ADDED = "  // greet('  Ada ') should say \"Hello, Ada!\", not \"Hello,   Ada !\".\n  name = name.trim();\n";
/** Tool call ids of the tour start with this, so calls of an earlier real model are never taken for the tour's. */
export const TOUR_ID_PREFIX = 'toolu_demo_';

/** What became of one tool call, read from its tool_result. */
export interface Outcome {
  status: 'done' | 'denied' | 'refusedByPlan' | 'refused' | 'failed' | 'interrupted';
  /** The person's feedback (denied), Keel's reason (refused), the error (failed), or the output (done). */
  detail: string;
}

/** An edit of {@link TOUR_FILE}: `add` puts {@link TOUR_ADDED} in, `remove` takes it out again. */
export interface TourEdit {
  path: string;
  direction: 'add' | 'remove';
  oldString: string;
  newString: string;
}

export type TourStep =
  /** Say hello, think, and Read the sample file. `restart`: a tour ran before in this task. */
  | { kind: 'intro'; prompt: string; restart: boolean }
  /** Propose an Edit of the file that was read. */
  | { kind: 'edit'; edit: TourEdit; lines: number }
  /** The file is missing (or not the sample's): Write a short note instead. */
  | { kind: 'write'; read: Outcome }
  /** Run the command, after saying what became of the change. */
  | { kind: 'command'; change: Outcome; changeTool: 'Edit' | 'Write' }
  /** Explain what happened: the change and the command, each allowed or not. */
  | { kind: 'wrapUp'; change: Outcome; changeTool: 'Edit' | 'Write'; command: Outcome }
  /** Plan mode refused the change: say so and end with the plan. */
  | { kind: 'planStop'; changeTool: 'Edit' | 'Write' }
  /** A prompt after a tour: a short answer (say "tour" to see it again). */
  | { kind: 'followUp'; prompt: string };

interface TourCall {
  use: ToolUseBlock;
  result: ToolResultBlock | undefined;
}

function textOf(m: ConversationMessage): string {
  return m.content
    .flatMap((b) => (b.type === 'text' ? [b.text] : []))
    .join('\n')
    .trim();
}

/** Whether a prompt asks for the tour (again). */
export function wantsTour(prompt: string): boolean {
  return /\b(tour|again|restart|start over|demo|show me)\b/i.test(prompt);
}

/** What a tool_result says became of its call. Keel's wording of denials is matched loosely. */
export function outcomeOf(result: ToolResultBlock | undefined): Outcome {
  if (!result) return { status: 'interrupted', detail: 'no result came back' };
  const content = toolResultText(result).trim();
  if (!result.is_error) return { status: 'done', detail: content };
  const denied = /^The user denied this \w+ call\.(?:\s*Feedback:\s*([\s\S]*))?$/.exec(content);
  if (denied) {
    // A host that had no words from the person says so in the feedback itself ("The user denied this.").
    const feedback = (denied[1] ?? '').trim();
    return { status: 'denied', detail: /^The user denied this\b/i.test(feedback) ? '' : feedback };
  }
  // A call that would have asked, where nobody could answer (a headless run, keel mcp serve): it
  // was denied for want of a person, with what would allow it (gate.ts unattendedDenial).
  const unattended = /^Permission denied:\s*(Keel would ask first [\s\S]*?)\.?$/.exec(content);
  if (unattended) return { status: 'denied', detail: (unattended[1] ?? '').trim() };
  const refused = /^Permission denied:\s*([\s\S]*?)\.?$/.exec(content);
  if (refused) return { status: /plan mode/i.test(content) ? 'refusedByPlan' : 'refused', detail: (refused[1] ?? '').trim() };
  if (/interrupted|cancelled|did not run to completion/i.test(content)) return { status: 'interrupted', detail: content };
  return { status: 'failed', detail: content };
}

/** The file text inside a Read result (its `cat -n` numbering removed), or null when it is not one. */
export function textOfRead(content: string): string | null {
  const lines = content.split('\n');
  const out: string[] = [];
  for (const line of lines) {
    const m = /^\s*\d+\t(.*)$/.exec(line);
    if (m) out.push(m[1] ?? '');
    else if (line.trim() === '' || line.startsWith('[')) break; // the notes after the numbered lines
    else return null;
  }
  return out.length > 0 ? `${out.join('\n')}\n` : null;
}

/** The edit the tour proposes for the sample's text, or null when the text is not the sample's. */
export function editFor(text: string): TourEdit | null {
  if (text.includes(TOUR_ADDED + TOUR_ANCHOR)) {
    return { path: TOUR_FILE, direction: 'remove', oldString: TOUR_ADDED + TOUR_ANCHOR, newString: TOUR_ANCHOR };
  }
  if (text.split(TOUR_ANCHOR).length === 2) {
    return { path: TOUR_FILE, direction: 'add', oldString: TOUR_ANCHOR, newString: TOUR_ADDED + TOUR_ANCHOR };
  }
  return null;
}

/** The tour's calls after message `from`, each with its result (if one came back). */
function tourCalls(messages: ConversationMessage[], from: number): TourCall[] {
  const calls: TourCall[] = [];
  const results = new Map<string, ToolResultBlock>();
  for (let i = from; i < messages.length; i++) {
    const m = messages[i]!;
    for (const b of m.content) {
      if (m.role === 'assistant' && b.type === 'tool_use' && b.id.startsWith(TOUR_ID_PREFIX)) calls.push({ use: b, result: undefined });
      if (m.role === 'user' && b.type === 'tool_result') results.set(b.tool_use_id, b);
    }
  }
  for (const c of calls) c.result = results.get(c.use.id);
  return calls;
}

/**
 * The next step of the tour for a conversation. Total: every conversation (empty, foreign,
 * cut off, repaired) gets a step; a call without a result counts as interrupted.
 */
export function nextTourStep(messages: readonly ConversationMessage[]): TourStep {
  const all = [...messages];
  let promptAt = -1;
  for (let i = all.length - 1; i >= 0; i--) {
    const m = all[i]!;
    if (m.role === 'user' && textOf(m)) {
      promptAt = i;
      break;
    }
  }
  const prompt = promptAt >= 0 ? textOf(all[promptAt]!) : '';
  const calls = tourCalls(all, promptAt + 1);
  const last = calls.at(-1);
  if (!last) {
    const toured = tourCalls(all.slice(0, Math.max(0, promptAt)), 0).length > 0;
    if (toured && !wantsTour(prompt)) return { kind: 'followUp', prompt };
    return { kind: 'intro', prompt, restart: toured };
  }
  const change = calls.find((c) => c.use.name === 'Edit' || c.use.name === 'Write');
  const changeTool = change?.use.name === 'Write' ? 'Write' : 'Edit';
  switch (last.use.name) {
    case 'Read': {
      const read = outcomeOf(last.result);
      const text = read.status === 'done' ? textOfRead(read.detail) : null;
      const edit = text === null ? null : editFor(text);
      if (edit && text !== null) return { kind: 'edit', edit, lines: text.split('\n').length - 1 };
      return { kind: 'write', read };
    }
    case 'Edit':
    case 'Write': {
      const outcome = outcomeOf(last.result);
      if (outcome.status === 'refusedByPlan') return { kind: 'planStop', changeTool };
      return { kind: 'command', change: outcome, changeTool };
    }
    default:
      return { kind: 'wrapUp', change: outcomeOf(change?.result), changeTool, command: outcomeOf(last.result) };
  }
}
