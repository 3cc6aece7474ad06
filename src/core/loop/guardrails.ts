import { toolResultText, type ConversationMessage } from '../../shared/domain/messages';
import { writeNoFollowSync } from '../security/linkFreeFiles';
import { readText } from './files';

/**
 * Error patterns of a loop: every failed tool call and every task error of an iteration becomes a
 * signature (the tool and the first line of the error, with numbers and long hex ids blanked so
 * that "line 12" and "line 14" are one pattern). A pattern seen GUARDRAIL_THRESHOLD times or more
 * over the loop is appended to guardrails.md once, and every later iteration reads it. Pure except
 * `appendGuardrails`.
 */
export const GUARDRAIL_THRESHOLD = 3;

export function signature(kind: string, text: string): string {
  const first = text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '') ?? '';
  const normalized = first
    .replace(/\b[0-9a-f]{12,}\b/gi, 'H')
    .replace(/\d+/g, 'N')
    .replace(/\s+/g, ' ')
    .slice(0, 160);
  return `${kind}: ${normalized}`;
}

/** Collects the error signatures of one iteration from its conversation messages. */
export class ErrorCollector {
  private readonly toolNames = new Map<string, string>();
  readonly signatures: string[] = [];

  /** A `message` event of the iteration's task. */
  message(m: ConversationMessage): void {
    for (const block of m.content) {
      if (block.type === 'tool_use') this.toolNames.set(block.id, block.name);
      else if (block.type === 'tool_result' && block.is_error) {
        this.signatures.push(signature(this.toolNames.get(block.tool_use_id) ?? 'tool', toolResultText(block)));
      }
    }
  }

  /** An `error` event of the iteration's task. */
  error(code: string, message: string): void {
    this.signatures.push(signature(`error ${code}`, message));
  }
}

/** Adds `found` to `counts`; returns the patterns that reached the threshold now (each once). */
export function countErrors(counts: Record<string, number>, found: readonly string[]): { counts: Record<string, number>; reached: string[] } {
  const next = { ...counts };
  const reached: string[] = [];
  for (const s of found) {
    const before = next[s] ?? 0;
    next[s] = before + 1;
    if (before < GUARDRAIL_THRESHOLD && before + 1 >= GUARDRAIL_THRESHOLD) reached.push(s);
  }
  return { counts: next, reached };
}

/** Appends the patterns not yet in the file (`path`, inside `workspace`, never through a link). Returns the ones appended. Throws on I/O errors. */
export function appendGuardrails(workspace: string, path: string, patterns: readonly string[], iteration: number): string[] {
  const existing = readText(workspace, path);
  const fresh = patterns.filter((p) => !existing.includes(p));
  if (fresh.length === 0) return [];
  const lines = fresh.map((p) => `- Seen ${GUARDRAIL_THRESHOLD} or more times (by iteration ${iteration}): \`${p.replace(/`/g, "'")}\` — do not repeat it; find another way.\n`);
  writeNoFollowSync(workspace, path, `${existing.endsWith('\n') || existing === '' ? '' : '\n'}${lines.join('')}`, { append: true });
  return fresh;
}
