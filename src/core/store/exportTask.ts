import { rewoundWords } from '../../shared/domain/checkpoints';
import type { TranscriptItem } from '../../shared/domain/transcript';
import { CUT_OFF_WORDS, cutOffOf } from '../../shared/words/answers';
import type { LoadedTask } from './taskStore';
import type { TaskSummary } from './types';

/** A task as JSON: its meta, what a person saw (transcript items) and what the model saw. */
export function exportJson(task: LoadedTask, summary: TaskSummary = task.meta): string {
  return `${JSON.stringify(
    {
      format: 'keel.task-export',
      schemaVersion: task.meta.schemaVersion,
      exportedAt: new Date().toISOString(),
      meta: summary,
      transcript: task.replay.transcript,
      conversation: task.replay.conversation,
    },
    null,
    2,
  )}\n`;
}

/** A task as Markdown: a header with its figures, then the chat in order. */
export function exportMarkdown(task: LoadedTask, summary: TaskSummary = task.meta): string {
  const m = summary;
  const out: string[] = [
    `# ${m.title}`,
    '',
    `- Id: \`${m.id}\``,
    `- Status: ${m.status}`,
    `- Created: ${new Date(m.createdAt).toISOString()}`,
    `- Updated: ${new Date(m.updatedAt).toISOString()}`,
    `- Model: ${m.model || 'unknown'}`,
    `- Workspace: ${m.workspace || 'unknown'}`,
    `- Tokens: ${m.tokens}`,
    `- Cost: $${m.costUsd.toFixed(4)}`,
    '',
  ];
  for (const it of task.replay.transcript.items) out.push(...itemMarkdown(it), '');
  return `${out.join('\n').trimEnd()}\n`;
}

function itemMarkdown(it: TranscriptItem): string[] {
  switch (it.kind) {
    case 'user':
      // As typed (`/review a.ts`), with what it sent folded away, as the chat shows it.
      return it.typed !== undefined ? ['## User', '', it.typed, '', '<details><summary>What it sent</summary>', '', it.text, '', '</details>'] : ['## User', '', it.text];
    case 'assistant': {
      const cut = cutOffOf(it);
      const lines = [`## Assistant${it.model ? ` (${it.model})` : ''}${cut ? ` — ${CUT_OFF_WORDS[cut].tag}` : ''}`, ''];
      if (it.thinking) lines.push('<details><summary>Thinking</summary>', '', it.thinking, '', '</details>', '');
      lines.push(it.text || '_(no text)_');
      if (cut) lines.push('', `_${CUT_OFF_WORDS[cut].sentence}_`);
      return lines;
    }
    case 'tool': {
      const lines = [`### Tool: ${it.name}`, '', fence(JSON.stringify(it.input, null, 2), 'json')];
      if (it.permission) lines.push('', `Permission: ${it.permission.decision}${it.permission.reason ? ` (${it.permission.reason})` : ''}`);
      if (it.result) lines.push('', `Result${it.result.isError ? ' (error)' : ''}: ${it.result.summary}`);
      else lines.push('', 'Result: not recorded');
      if (it.output) lines.push('', fence(it.output, 'text'));
      return lines;
    }
    case 'error':
      return [`> **Error** (${it.code}): ${it.message}`];
    case 'notice':
      return [`> ${it.text}`];
    case 'context': {
      const parts = [];
      if (it.instructions.length) parts.push(`Instructions: ${it.instructions.join(', ')}`);
      if (it.memories.length) parts.push(`Used ${it.memories.length} ${it.memories.length === 1 ? 'memory' : 'memories'}: ${it.memories.map((m) => `${m.title} (\`${m.file}\`)`).join(', ')}`);
      return parts.length ? [`> ${parts.join(' — ')}`] : [];
    }
    case 'gatekeeper':
      return [`> Memory ${it.decision}${it.file ? ` \`${it.file}\`` : ''}: ${it.reasons.join('; ')}`];
    case 'rewind':
      return [`> ${it.label} — ${rewoundWords(it.files)}`];
  }
}

function fence(text: string, lang: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const f = '`'.repeat(longest + 1);
  return `${f}${lang}\n${text}\n${f}`;
}
