import type { TaskTranscript } from '../../shared/domain/transcript';
import { loadInstructions } from '../context/instructions';
import { MemoryStore } from '../memory/memoryStore';
import type { TrustView } from '../trust/items';

/**
 * What the built-in commands that only tell something say (`/memory`, `/cost`), in one place for
 * the chat and `keel run`. Never throws.
 */

/**
 * `/memory`: the instructions files a run reads here (as `trust` approves the workspace's: the
 * held ones are named as held) and the project's memories.
 */
export function memoryLines(workspace: string, trust: TrustView, home?: string): string[] {
  const instructions = loadInstructions({ workspace, trust, ...(home ? { home } : {}) });
  const memories = new MemoryStore(workspace).list();
  const lines = [
    instructions.files.length
      ? `Instructions files read into every run: ${instructions.files.map((f) => f.display + (f.importedBy ? ` (imported by ${f.importedBy})` : '')).join(', ')}`
      : 'No instructions files (KEEL.md, AGENTS.md, CLAUDE.md, .claude/CLAUDE.md, ~/.keel/KEEL.md).',
    ...(instructions.held.length ? [`Held back until you approve them (keel trust show): ${instructions.held.map((h) => h.source).join(', ')}`] : []),
    memories.length ? `Project memories in .keel/memory/ (${memories.length}):` : 'No project memories in .keel/memory/.',
    ...memories.map((m) => `  ${m.file}  ${m.title}`),
  ];
  return lines;
}

/** `/cost`: the task's tokens and cost, and its budget when it has one. */
export function costLines(t: Pick<TaskTranscript, 'usage' | 'budget'>): string[] {
  const u = t.usage;
  const lines = [
    `Cost so far: $${u.costUsd.toFixed(4)}`,
    `Tokens: ${u.inputTokens} in, ${u.outputTokens} out, ${u.cacheReadTokens} read from cache, ${u.cacheWriteTokens} written to cache`,
  ];
  const b = t.budget;
  if (b && b.capUsd !== null) lines.push(`Budget: $${b.spentUsd.toFixed(4)} of $${b.capUsd.toFixed(2)} spent (sub-agents and other calls included)`);
  else if (b && b.spentUsd > u.costUsd) lines.push(`With sub-agents and other calls: $${b.spentUsd.toFixed(4)}`);
  return lines;
}
