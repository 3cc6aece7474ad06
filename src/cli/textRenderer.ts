import type { TaskEvent } from '../shared/domain/events';
import { retryNotice, waitingNotice } from '../shared/domain/transcript';
import { todoSummary, type TodoStatus } from '../shared/domain/todos';

/** How each state of a todo reads in a terminal. */
const TODO_MARK: Record<TodoStatus, string> = { pending: '[ ]', in_progress: '[~]', completed: '[x]' };

/**
 * Human output of `keel run`: the answer on stdout as it streams; tool activity, retries and
 * errors on stderr, so stdout stays the answer.
 */
export class TextRenderer {
  private atLineStart = true;
  /** Calls whose denial was printed: their result says the same again and is not printed. */
  private readonly denied = new Set<string>();

  constructor(
    private readonly out: (s: string) => void,
    private readonly err: (s: string) => void,
  ) {}

  render(e: TaskEvent): void {
    switch (e.type) {
      case 'text':
        this.out(e.delta);
        this.atLineStart = e.delta.endsWith('\n');
        break;
      case 'user_message':
        // A message sent as something else (a command's text): say what ran, as the person typed
        // it; what was sent is in stream-json and `keel tasks show`. Plain messages are not echoed.
        if (e.typed === undefined) break;
        this.newline();
        this.err(`${e.typed.split('\n').map((l) => `> ${l}`).join('\n')}\n`);
        break;
      case 'tool_call':
        this.newline();
        this.err(`→ ${e.name} ${brief(e.input)}\n`);
        break;
      case 'tool_result':
        if (this.denied.delete(e.id)) break;
        this.err(`  ${e.is_error ? '✗' : '✓'} ${e.summary}\n`);
        break;
      case 'permission':
        if (e.decision !== 'deny') break;
        this.denied.add(e.toolCallId);
        this.err(`  ✗ permission denied for ${e.tool}: ${e.reason ?? ''}\n`);
        break;
      case 'retry':
        this.newline();
        this.err(`(${e.code}) ${retryNotice(e)}\n`);
        break;
      case 'waiting':
        // The answer goes on after this: its text on stdout is left whole (no line break added
        // there); on a terminal the notice still starts on a line of its own.
        this.err(`${this.atLineStart ? '' : '\n'}(waiting) ${waitingNotice(e)}\n`);
        break;
      case 'error':
        this.newline();
        this.err(`Error (${e.code}): ${e.message}\n`);
        break;
      case 'todos': {
        // The list whole, each time it changes: the person follows the plan as the model keeps it.
        this.newline();
        const { done, total } = todoSummary(e.todos);
        this.err(`Todos (${done}/${total} done):\n${e.todos.map((t) => `  ${TODO_MARK[t.status]} ${t.status === 'in_progress' && t.activeForm ? t.activeForm : t.content}`).join('\n')}\n`);
        break;
      }
      case 'budget':
        if (e.capUsd !== null) this.err(`(budget: $${e.spentUsd.toFixed(4)} of $${e.capUsd.toFixed(2)} spent)\n`);
        break;
      case 'instructions':
        this.err(`(instructions: ${e.files.join(', ')})\n`);
        break;
      case 'memory':
        this.err(`(used ${e.hits.length} ${e.hits.length === 1 ? 'memory' : 'memories'}: ${e.hits.map((h) => `.keel/memory/${h.file}`).join(', ')})\n`);
        break;
      case 'gatekeeper':
        if (e.decision === 'saved') {
          this.newline();
          this.err(`(remembered: "${e.title ?? ''}" in .keel/memory/${e.file ?? ''})\n`);
        } else if (e.decision === 'rejected') {
          this.newline();
          this.err(`(a lesson was not kept, rule ${e.rule}: ${e.reasons.join('; ')})\n`);
        }
        break;
      default:
        break;
    }
  }

  finish(): void {
    this.newline();
  }

  private newline(): void {
    if (!this.atLineStart) this.out('\n');
    this.atLineStart = true;
  }
}

function brief(input: Record<string, unknown>): string {
  const main = input.command ?? input.file_path ?? input.pattern ?? input.url ?? input.description;
  const s = typeof main === 'string' ? main : JSON.stringify(input);
  return s.length > 100 ? `${s.slice(0, 97)}…` : s;
}
