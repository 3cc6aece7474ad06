import { fromPromise, type ActorRefFrom, type SnapshotFrom } from 'xstate';
import type { KeelError } from '../../shared/domain/errors';
import type { TaskEvent } from '../../shared/domain/events';
import type { ConversationMessage, Usage } from '../../shared/domain/messages';
import { loadInstructions, type InstructionsFile } from '../context/instructions';
import { requestEstimateUsd } from '../machines/turn/budget';
import { userText } from '../machines/turn/conversation';
import { LESSON_MAX_TOKENS, LESSON_SYSTEM } from '../memory/lesson';
import { skillsPrompt } from '../commands/skills';
import { taskLockKey, type LockManager } from '../locks/lockManager';
import { runPhasesMachine, type GatekeeperVerdict, type MemorySearchResult, type RunPhasesContext, type RunResources, type RunSetup } from '../machines/runPhases/runPhases.machine';
import { beforeLesson, judgeLesson, noLesson, type GatekeeperDecision } from '../memory/gatekeeper';
import { extractLesson, runDigest } from '../memory/lesson';
import type { ProjectMemory } from '../memory/projectMemory';
import type { MemorySettings } from '../memory/settings';
import type { ModelProvider } from '../providers/types';
import type { SecretKeeper } from '../security/secretKeeper';
import { fileDigest } from '../trust/digest';
import { isApproved, memoryItem, type TrustItem, type TrustView } from '../trust/items';
import { errorMessage } from '../../shared/domain/errors';

/** What a task's run phases (`wireRunPhases`) need from the task that runs them. */
export interface RunPhaseServices {
  taskId: string;
  workspace: string;
  /** Read the instructions files (default true; false: a run's setup only creates its provider). */
  instructions?: boolean;
  /** The person's home, for ~/.keel/KEEL.md (default os.homedir()). */
  home?: string;
  /** The task is a subtask (no lessons of its own). */
  subtask: boolean;
  /** The task is an iteration of a loop (no lessons of its own: the loop's files keep them). */
  loopIteration?: boolean;
  /** The skills the run may load: their names and descriptions go into its system prompt. */
  skills?(): readonly { name: string; description: string }[];
  /** The workspace's memory; null when memory is off for this host. Read at the start of each run. */
  memory(): ProjectMemory | null;
  /** The memory settings now; read at the start of each run. */
  settings(): MemorySettings;
  secrets: SecretKeeper;
  /**
   * The person's approvals (docs/permissions.md, "Trust"): the workspace's instructions files and
   * committed memories are used only once approved in their exact content.
   */
  trust: TrustView;
  /** What this run left out for want of approval (the host tells the person). */
  held?(items: TrustItem[]): void;
  /** The instructions files a run read into its context (InstructionsLoaded hooks). */
  instructionsLoaded?(files: InstructionsFile[]): void;
  /** A memory Keel's gatekeeper saved is Keel's own: recorded as approved in its exact content. */
  ownMemory?(item: TrustItem): Promise<void>;
  locks: LockManager;
  /** Creates the run's provider (a KeelError fails the run in `initializing`). */
  createProvider(): Promise<ModelProvider | KeelError>;
  /** The provider kind and model of the run (known once the provider is created). */
  providerKind(): string;
  model(): string;
  /** The task's conversation now (the gatekeeper's digest reads the run's part of it). */
  conversation(): ConversationMessage[];
  publish(event: TaskEvent): void;
  /** The lesson call's tokens: the task machine adds them (and their price) to the task's usage and cost. */
  charge(usage: Usage): void;
  /** Whether the task's budget leaves room for a call that may cost up to `estimateUsd` (docs/cli.md, "Budget"). Absent: always. */
  admit?(estimateUsd: number): boolean;
  log(level: 'info' | 'warn' | 'error', message: string): void;
}

/** Where a run starts: its number, the prompt it answers, and the index of its first message. */
export interface RunStart {
  run: number;
  prompt: string;
  fromMessage: number;
}

/** What a run's turn loop gets: its provider and the system prompt parts the phases prepared. */
export interface PreparedRun {
  provider: ModelProvider;
  /** Instructions files and memories, in that order (empty parts left out). */
  system: string[];
}

/** How long the lesson call may take before the gatekeeper gives up ("no lesson"). */
const LESSON_TIMEOUT_MS = 60_000;

/** The run's phases as the task machine holds them (its child `runPhases`, spawned as `initializing` is entered). */
export type RunPhasesRef = ActorRefFrom<typeof runPhasesMachine>;

/**
 * The runPhases machine with its real actors for one task: the instructions files and the
 * provider (initializing), the memory search, the runner (`runnerStarting`: this process's pid;
 * on workers none yet — the worker is leased by the run's query once the turn loop starts, and
 * the task machine gives the phases its pid, RUNNER), then after a completed run the gatekeeper
 * (one short lesson call under the task's lock) and the memory write. The actors keep nothing
 * between them: what a run prepared (its provider, memory, settings, system text) is the phases'
 * context (`prepared`), passed to each later phase as input. The task machine owns each run's
 * phases: it spawns them when a run starts, feeds them what its turn loop tells it, tells them
 * how the run ended, and stops them (an interrupt, a lost worker, a failed record).
 */
export function wireRunPhases(s: RunPhaseServices) {
  return runPhasesMachine.provide({
    actors: {
      loadRunSetup: fromPromise(async ({ input }): Promise<RunSetup> => {
        const settings = s.settings();
        const memory = settings.enabled ? s.memory() : null;
        const created = await s.createProvider();
        // The provider's KeelError (no key, …) fails the run in `initializing`, and is the task's error.
        if (!('stream' in created)) throw created;
        const resources: RunResources = { provider: created, settings, memory };
        if (s.instructions === false) return { instructionFiles: [], resources };
        const loaded = loadInstructions({ workspace: s.workspace, ...(s.home ? { home: s.home } : {}), knownSecrets: s.secrets.values(), trust: s.trust });
        for (const p of loaded.problems) s.log('warn', `instructions: ${p}`);
        if (loaded.held.length) s.held?.(loaded.held);
        // Skills after the instructions: only their names and descriptions (docs/commands.md).
        const instructions = [loaded.text, skillsPrompt(s.skills?.() ?? [])].filter(Boolean).join('\n\n');
        const files = loaded.files.map((f) => f.display);
        if (files.length) s.publish({ type: 'instructions', taskId: s.taskId, run: input.run, files });
        if (loaded.files.length) s.instructionsLoaded?.(loaded.files);
        return { instructionFiles: files, instructions, resources };
      }),
      searchMemory: fromPromise(async ({ input }): Promise<MemorySearchResult> => {
        const memory = input.resources?.memory;
        if (!input.resources || !memory) return { hits: [], tokens: 0 };
        // A memory is used only as the person approved it, or as Keel itself saved it.
        const unapproved: TrustItem[] = [];
        const found = memory.recall(input.prompt, input.resources.settings.maxTokens, s.secrets.values(), (m) => {
          const item = memoryItem(m.file, fileDigest(m.path), m.title);
          if (isApproved(s.trust, item)) return true;
          unapproved.push(item);
          return false;
        });
        if (unapproved.length) s.held?.(unapproved);
        for (const l of found.left) s.log('warn', `memory: ${l.file} left out of the prompt: ${l.why}`);
        const hits = found.used.map((h) => ({ file: h.memory.file, title: h.memory.title, score: Math.round(h.score * 100) / 100 }));
        if (hits.length) s.publish({ type: 'memory', taskId: s.taskId, run: input.run, hits, tokens: found.tokens });
        return { hits, tokens: found.tokens, text: found.text };
      }),
      // In process the runner is this process; on workers it is leased later (RUNNER gives its pid).
      acquireRunner: fromPromise(async ({ input }) => ({ pid: input.runner === 'worker' ? null : process.pid })),
      evaluateGatekeeper: fromPromise(async ({ input, signal }) => {
        const decision = await judge(s, input, signal);
        if (decision.decision !== 'saved') {
          s.publish({ type: 'gatekeeper', taskId: s.taskId, run: input.run, decision: decision.decision, rule: decision.rule, reasons: decision.reasons });
          if (decision.decision === 'rejected') s.log('info', `memory: lesson rejected by rule ${decision.rule}: ${decision.reasons.join('; ')}`);
        }
        return verdictOf(decision);
      }),
      persistMemory: fromPromise(async ({ input: p }) => {
        const memory = p.memory;
        if (!memory) throw new Error('memory is off for this run');
        const file = await memory.save(p.lesson, s.taskId);
        try {
          const path = memory.store.pathOf(file);
          await s.ownMemory?.(memoryItem(file, fileDigest(path), p.lesson.title));
        } catch (err) {
          s.log('warn', `memory: ${file} was saved, but could not be recorded as Keel's own (${errorMessage(err)}); it waits for your approval like a committed one`);
        }
        s.publish({ type: 'gatekeeper', taskId: s.taskId, run: p.run, decision: 'saved', rule: 'accepted', reasons: ['it passed every rule'], file, title: p.lesson.title });
        return file;
      }),
    },
    actions: { publish: (_, event) => void (event && s.publish(event)) },
  });
}

/**
 * Resolves once `phases` reach `runnerRunning`, with what the run's turn loop gets (read from
 * their context); rejects with the cause (the provider's KeelError, or an Error) when the run
 * failed before.
 */
export async function preparedRun(phases: RunPhasesRef | undefined): Promise<PreparedRun> {
  if (!phases) throw new Error('the run has no phases');
  const snap = await waitFor(phases, (p) => p.value === 'runnerRunning' || p.status !== 'active');
  const { resources, instructions, memoryText } = snap.context.prepared;
  if (snap.value === 'runnerRunning' && resources) return { provider: resources.provider, system: [instructions, memoryText].filter(Boolean) };
  const cause = snap.context.failureCause;
  throw isKeelError(cause) ? cause : new Error(failureText(snap.context));
}

/** Resolves once `phases` are over (completed, failed, or stopped); at once when there are none. */
export async function phasesOver(phases: RunPhasesRef | undefined): Promise<void> {
  if (phases) await waitFor(phases, (p) => p.status !== 'active');
}

/** Lets xstate's `waitFor` see a stopped actor as over (it never emits again). */
function waitFor(phases: RunPhasesRef, done: (snap: SnapshotFrom<typeof runPhasesMachine>) => boolean): Promise<SnapshotFrom<typeof runPhasesMachine>> {
  const now = phases.getSnapshot();
  if (done(now)) return Promise.resolve(now);
  return new Promise((resolve) => {
    const sub = phases.subscribe({
      next: (snap) => {
        if (!done(snap)) return;
        sub.unsubscribe();
        resolve(snap);
      },
      error: () => resolve(phases.getSnapshot()),
      complete: () => resolve(phases.getSnapshot()),
    });
  });
}

/** The gatekeeper's decision for a completed run: the rules before the lesson call, the call, the rules on the lesson. */
async function judge(s: RunPhaseServices, run: { toolSummaries: string[]; fromMessage: number; resources: RunResources | null }, signal: AbortSignal): Promise<GatekeeperDecision> {
  const settings = run.resources?.settings;
  const memory = run.resources?.memory ?? null;
  const early = beforeLesson({
    memoryEnabled: settings?.enabled === true && memory !== null,
    autoSave: settings?.autoSave ?? false,
    status: 'completed',
    provider: s.providerKind(),
    subtask: s.subtask,
    loopIteration: s.loopIteration === true,
    memoryFolderProblem: memory?.folderProblem() ?? null,
  });
  if (early) return early;
  const provider = run.resources?.provider;
  if (!provider || !memory) return noLesson('no provider for the lesson call');
  // The run's end is told from inside the task machine's transition, while its snapshot may
  // still hold the conversation before the turn's answer was recorded: read it once that
  // transition has finished.
  await Promise.resolve();
  const digest = runDigest(s.conversation(), run.fromMessage, run.toolSummaries);
  // Priced at its worst like every request (machines/turn/budget.ts): without room for it, no lesson.
  if (s.admit && !s.admit(requestEstimateUsd(s.model(), [LESSON_SYSTEM], [userText(`The finished task:\n\n${digest}`)], [], LESSON_MAX_TOKENS))) {
    return noLesson('the task\'s budget leaves no room for the lesson call');
  }
  const timeout = AbortSignal.any([signal, AbortSignal.timeout(LESSON_TIMEOUT_MS)]);
  let answer;
  try {
    // The lesson call is a provider request of this task: it takes the task's lock like any other.
    answer = await s.locks.runExclusive(taskLockKey(s.taskId), () => extractLesson(provider, s.model(), s.taskId, digest, timeout), { signal: timeout });
  } catch (err) {
    if (signal.aborted) throw err;
    return noLesson(`the lesson call did not finish: ${errorMessage(err)}`);
  }
  // What the call used counts whatever it answered (a failed call counts what the server reported).
  const u = answer.usage;
  if (u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens > 0) s.charge(u);
  if (!answer.lesson) return noLesson(answer.none ?? 'no lesson');
  const similar = memory.index.similarCandidates(`${answer.lesson.title}\n${answer.lesson.body}`);
  return judgeLesson(answer.lesson, similar, s.secrets.values());
}

function verdictOf(d: GatekeeperDecision): GatekeeperVerdict {
  return { decision: d.decision, rule: d.rule, reasons: d.reasons, ...(d.lesson ? { lesson: d.lesson } : {}) };
}

/** A KeelError an actor threw as it is (the provider's: its code says what the person can do). */
function isKeelError(e: unknown): e is KeelError {
  return typeof e === 'object' && e !== null && 'code' in e && 'message' in e && typeof e.message === 'string';
}

function failureText(c: RunPhasesContext): string {
  return c.failure ? `${c.failure.phase}: ${c.failure.message}` : 'the run failed';
}
