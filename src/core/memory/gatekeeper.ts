import type { GatekeeperOutcome } from '../../shared/domain/events';
import type { LessonCandidate } from './lesson';
import { instructionFinding, secretFinding } from './lessonText';
import type { StoredMemory } from './memoryStore';
import { similarity } from './terms';

/**
 * The gatekeeper decides whether what a run learned becomes a memory. Its rules run in the order
 * of `GATEKEEPER_RULES`; the first that does not pass decides (skipped or rejected), with its
 * reasons; a lesson that passes them all is saved. Every decision is recorded (the task's
 * `gatekeeper` event) and every rejection logged with its rule. A rejected lesson's text is never
 * written anywhere.
 */
export interface GatekeeperRule {
  id: string;
  /** What the rule does when it does not pass. */
  outcome: Exclude<GatekeeperOutcome, 'saved'>;
  description: string;
}

export const GATEKEEPER_RULES: readonly GatekeeperRule[] = [
  {
    id: 'memory-enabled',
    outcome: 'skipped',
    description: "Memory is on (`keel.memory.enabled`; off for a CLI run with `--no-memory` or `KEEL_MEMORY=off`) and the workspace's memory folder is usable (not a link).",
  },
  { id: 'run-completed', outcome: 'skipped', description: 'The run completed successfully (not failed, cancelled or interrupted).' },
  { id: 'auto-save', outcome: 'skipped', description: 'Saving lessons automatically is on (`keel.memory.autoSave`).' },
  { id: 'top-level', outcome: 'skipped', description: 'The run is a task of its own, not a subtask (the parent task learns from its answer).' },
  {
    id: 'not-loop-iteration',
    outcome: 'skipped',
    description: 'The run is not an iteration of a loop (a loop keeps what it learns in its own progress and guardrails files, which every iteration reads).',
  },
  { id: 'real-model', outcome: 'skipped', description: 'The run used a real model: the demo model teaches nothing about a project.' },
  { id: 'lesson-found', outcome: 'skipped', description: 'The lesson call (one short model call) proposed a lesson.' },
  { id: 'length', outcome: 'rejected', description: `The title is at most 80 characters and the text at most ${600} characters.` },
  {
    id: 'secret',
    outcome: 'rejected',
    description:
      "Nothing looks like a secret: secretlint's recommended rules, Keel's own key shapes, the keys Keel holds, random-looking and long hexadecimal strings, " +
      'passwords given in the clear — in the text as written, with its pieces joined, and in whatever base64, hex or %-encoded runs decode to.',
  },
  {
    id: 'instruction',
    outcome: 'rejected',
    description:
      'It does not try to change how Keel behaves (ignore instructions, allow commands, skip permission prompts) nor hold prompt markup, ' +
      'read after folding Unicode look-alikes, full-width letters, invisible characters, punctuation and case.',
  },
  { id: 'duplicate', outcome: 'rejected', description: 'It does not repeat an existing memory (word similarity of 0.8 or more).' },
];

export const MAX_TITLE_CHARS = 80;
export const MAX_BODY_CHARS = 600;
export const DUPLICATE_SIMILARITY = 0.8;

export interface GatekeeperDecision {
  decision: GatekeeperOutcome;
  /** The rule that decided: a rule id, or `accepted` for a saved lesson. */
  rule: string;
  reasons: string[];
  /** The lesson to save (only when `decision` is saved). */
  lesson?: LessonCandidate;
}

export interface RunFacts {
  memoryEnabled: boolean;
  autoSave: boolean;
  /** How the run ended. */
  status: 'completed' | 'failed' | 'aborted' | 'interrupted';
  /** The provider kind of the run (`demo` teaches nothing). */
  provider: string;
  /** The run belongs to a subtask (the Task tool). */
  subtask?: boolean;
  /** The run is an iteration of a loop (docs/loop.md). */
  loopIteration?: boolean;
  /** Why the workspace's memory folder is not used (a link), if it is not. */
  memoryFolderProblem?: string | null;
}

/** The rules that need no lesson: null when the lesson call should be made, else the decision. Pure. */
export function beforeLesson(run: RunFacts): GatekeeperDecision | null {
  if (!run.memoryEnabled) return skip('memory-enabled', 'memory is turned off');
  if (run.memoryFolderProblem) return skip('memory-enabled', `nothing is saved: ${run.memoryFolderProblem}`);
  if (run.status !== 'completed') return skip('run-completed', `the run ended ${run.status}`);
  if (!run.autoSave) return skip('auto-save', 'saving lessons automatically is turned off');
  if (run.subtask) return skip('top-level', 'a subtask does not save lessons; its parent does');
  if (run.loopIteration) return skip('not-loop-iteration', "a loop's iteration keeps what it learns in the loop's progress and guardrails files");
  if (run.provider === 'demo') return skip('real-model', 'the demo model ran this task');
  return null;
}

/**
 * The rules on a proposed lesson: length, secrets, instructions, duplicates. `similar` are the
 * existing memories closest to it (the index's candidates). `knownSecrets`: the keys this host
 * holds. Pure.
 */
export function judgeLesson(lesson: LessonCandidate, similar: readonly StoredMemory[], knownSecrets: Iterable<string> = []): GatekeeperDecision {
  if (lesson.title.length > MAX_TITLE_CHARS || lesson.body.length > MAX_BODY_CHARS) {
    if (lesson.title.length > MAX_TITLE_CHARS) return reject('length', `the title has ${lesson.title.length} characters (at most ${MAX_TITLE_CHARS})`);
    return reject('length', `the text has ${lesson.body.length} characters (at most ${MAX_BODY_CHARS})`);
  }
  const text = `${lesson.title}\n${lesson.body}\n${lesson.tags.join(' ')}`;
  const secret = secretFinding(text, knownSecrets);
  if (secret) return reject('secret', secret.why);
  const instruction = instructionFinding(text);
  if (instruction) return reject('instruction', instruction);
  for (const m of similar) {
    const s = similarity(`${lesson.title}\n${lesson.body}`, `${m.title}\n${m.body}`);
    if (s >= DUPLICATE_SIMILARITY) return reject('duplicate', `it repeats ${m.file} ("${m.title}"; similarity ${s.toFixed(2)})`);
  }
  return { decision: 'saved', rule: 'accepted', reasons: ['it passed every rule'], lesson };
}

function skip(rule: string, reason: string): GatekeeperDecision {
  return { decision: 'skipped', rule, reasons: [reason] };
}

function reject(rule: string, reason: string): GatekeeperDecision {
  return { decision: 'rejected', rule, reasons: [reason] };
}

/** A decision when the lesson call gave nothing. */
export function noLesson(reason: string): GatekeeperDecision {
  return skip('lesson-found', reason);
}

/**
 * Why a memory file (one a person or a repository wrote, which never met the gatekeeper) is left
 * out of a prompt, or null: the gatekeeper's secret and instruction rules. Pure.
 */
export function memoryScreen(m: { title: string; body: string; tags: readonly string[] }, knownSecrets: Iterable<string> = []): string | null {
  const text = `${m.title}\n${m.body}\n${m.tags.join(' ')}`;
  return secretFinding(text, knownSecrets)?.why ?? instructionFinding(text);
}
