import { relative } from 'node:path';
import type { StoredLoopSettings } from './files';

/**
 * The first (and only) user message of an iteration. An iteration is a fresh task: all it knows of
 * the loop is in here — the anchor (the goal), the progress file and the guardrails as they are
 * now, and how the loop ends. Nothing of an earlier iteration's conversation is carried over.
 */
export interface IterationPromptInput {
  workspace: string;
  paths: { anchor: string; progress: string; guardrails: string };
  iteration: number;
  settings: StoredLoopSettings;
  anchor: string;
  progress: string;
  guardrails: string;
}

const FILE_CAP = 60_000;

function section(title: string, path: string, text: string): string {
  const body = text.trim() === '' ? '(empty)' : text.length > FILE_CAP ? `${text.slice(0, FILE_CAP)}\n… (cut at ${FILE_CAP} characters; read the file for the rest)` : text.trimEnd();
  return `## ${title} (${path})\n\n${body}\n`;
}

export function iterationPrompt(i: IterationPromptInput): string {
  const rel = (p: string) => relative(i.workspace, p) || p;
  const ending = [
    `- When the goal is fully achieved — and only then — write the stop word \`${i.settings.stopWord}\` on a line of its own in ${rel(i.paths.progress)}.` +
      ' Do not write that word there for any other reason.',
    ...(i.settings.promise ? [`- When the goal is fully achieved, also end your final message with <promise>${i.settings.promise}</promise>. Only say it when it is true.`] : []),
  ];
  return [
    `You are iteration ${i.iteration} of at most ${i.settings.maxIterations} of a loop that works toward one goal.` +
      ' You start with a fresh context: what earlier iterations did and learned is only in the files below.',
    '',
    section('Goal', rel(i.paths.anchor), i.anchor),
    section('Progress so far', rel(i.paths.progress), i.progress),
    section('Guardrails', rel(i.paths.guardrails), i.guardrails),
    '## How this loop works',
    '',
    '- Take the next useful step toward the goal; verify what you did.',
    `- Keep ${rel(i.paths.progress)} current before you stop: what is done, what you learned, what comes next. You may write that file without asking (in plan mode it stays read-only).`,
    ...ending,
    '- Then stop. A fresh iteration continues from the progress file if the goal is not reached yet.',
    '',
  ].join('\n');
}
