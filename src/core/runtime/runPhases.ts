import { createActor, fromPromise, type Actor } from 'xstate';
import type { KeelError } from '../../shared/domain/errors';
import type { TaskEvent, TaskStatus } from '../../shared/domain/events';
import type { ConversationMessage, Usage } from '../../shared/domain/messages';
import { loadInstructions, type InstructionsFile } from '../context/instructions';
import { skillsPrompt } from '../commands/skills';
import { requestEstimateUsd } from '../machines/turn/budget';
import { userText } from '../machines/turn/conversation';
import { LESSON_MAX_TOKENS, LESSON_SYSTEM } from '../memory/lesson';
import { taskLockKey, type LockManager } from '../locks/lockManager';
import { runPhasesMachine, type GatekeeperVerdict, type RunPhasesContext } from '../machines/runPhases/runPhases.machine';
import { beforeLesson, judgeLesson, noLesson, type GatekeeperDecision } from '../memory/gatekeeper';
import { extractLesson, runDigest } from '../memory/lesson';
import type { ProjectMemory } from '../memory/projectMemory';
import type { MemorySettings } from '../memory/settings';
import type { ModelProvider } from '../providers/types';
import type { SecretKeeper } from '../security/secretKeeper';
import { fileDigest } from '../trust/digest';
import { isApproved, memoryItem, type TrustItem, type TrustView } from '../trust/items';
import { errorMessage } from '../../shared/domain/errors';

/**
 * Runs the runPhases machine (src/core/machines/runPhases/) for each run of one task with its real
 * actors: the instructions files and the provider (initializing), the memory search, the runner
 * (`runnerStarting` reports this process's pid, also when a pool runs the turn loop: the worker is
 * leased later, by the query machine in the task's turn loop), then after a completed run the gatekeeper (one
 * short lesson call under the task's lock) and the memory write. The task machine stays the
 * owner: its `initialize` calls `begin` and waits for `runnerRunning`; the task's events are fed
 * in through `observe`; nothing here starts or steers a turn loop.
 */
export interface RunPhaseServices {
  taskId: string;
  workspace: string;
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

export class RunPhases {
  private actor: Actor<typeof runPhasesMachine> | null = null;
  private finishing: Promise<void> = Promise.resolve();
  private settleFinishing: () => void = () => undefined;
  private pendingTools = 0;

  constructor(private readonly s: RunPhaseServices) {}

  /**
   * Starts the phases of run `start.run` (stopping what is left of the previous run's, which
   * cannot be running a model call: the task's lock orders it). Resolves once the run reaches
   * `runnerRunning`; rejects with the cause (a KeelError from the provider, or an Error) when the
   * run fails before, after publishing the `failed` phase.
   */
  begin(start: RunStart): Promise<PreparedRun> {
    const s = this.s;
    let provider: ModelProvider | null = null;
    let cause: unknown = null;
    const system: { instructions: string; memory: string } = { instructions: '', memory: '' };
    const toolSummaries: string[] = [];
    const input = { taskId: s.taskId, run: start.run };
    const settings = s.settings();
    const memory = settings.enabled ? s.memory() : null;
    const machine = runPhasesMachine.provide({
      actors: {
        loadRunSetup: fromPromise(async () => {
          const created = await s.createProvider();
          if (!('stream' in created)) {
            cause = created;
            throw new Error(created.message);
          }
          provider = created;
          const loaded = loadInstructions({ workspace: s.workspace, ...(s.home ? { home: s.home } : {}), knownSecrets: s.secrets.values(), trust: s.trust });
          for (const p of loaded.problems) s.log('warn', `instructions: ${p}`);
          if (loaded.held.length) s.held?.(loaded.held);
          // Skills after the instructions: only their names and descriptions (docs/commands.md).
          system.instructions = [loaded.text, skillsPrompt(s.skills?.() ?? [])].filter(Boolean).join('\n\n');
          const files = loaded.files.map((f) => f.display);
          if (files.length) s.publish({ type: 'instructions', taskId: s.taskId, run: start.run, files });
          if (loaded.files.length) s.instructionsLoaded?.(loaded.files);
          return { instructionFiles: files };
        }),
        searchMemory: fromPromise(async () => {
          if (!memory) return { hits: [], tokens: 0 };
          // A memory is used only as the person approved it, or as Keel itself saved it.
          const unapproved: TrustItem[] = [];
          const found = memory.recall(start.prompt, settings.maxTokens, s.secrets.values(), (m) => {
            const item = memoryItem(m.file, fileDigest(m.path), m.title);
            if (isApproved(s.trust, item)) return true;
            unapproved.push(item);
            return false;
          });
          if (unapproved.length) s.held?.(unapproved);
          for (const l of found.left) s.log('warn', `memory: ${l.file} left out of the prompt: ${l.why}`);
          system.memory = found.text;
          const hits = found.used.map((h) => ({ file: h.memory.file, title: h.memory.title, score: Math.round(h.score * 100) / 100 }));
          if (hits.length) s.publish({ type: 'memory', taskId: s.taskId, run: start.run, hits, tokens: found.tokens });
          return { hits, tokens: found.tokens };
        }),
        acquireRunner: fromPromise(async () => ({ pid: process.pid })),
        evaluateGatekeeper: fromPromise(async ({ signal }) => {
          const decision = await this.judge(start, provider, toolSummaries, settings, memory, signal);
          if (decision.decision !== 'saved') {
            s.publish({ type: 'gatekeeper', taskId: s.taskId, run: start.run, decision: decision.decision, rule: decision.rule, reasons: decision.reasons });
            if (decision.decision === 'rejected') s.log('info', `memory: lesson rejected by rule ${decision.rule}: ${decision.reasons.join('; ')}`);
          }
          return verdictOf(decision);
        }),
        persistMemory: fromPromise(async ({ input: p }) => {
          const file = await memory!.save(p.lesson, s.taskId);
          try {
            const path = memory!.store.pathOf(file);
            await s.ownMemory?.(memoryItem(file, fileDigest(path), p.lesson.title));
          } catch (err) {
            s.log('warn', `memory: ${file} was saved, but could not be recorded as Keel's own (${errorMessage(err)}); it waits for your approval like a committed one`);
          }
          s.publish({ type: 'gatekeeper', taskId: s.taskId, run: start.run, decision: 'saved', rule: 'accepted', reasons: ['it passed every rule'], file, title: p.lesson.title });
          return file;
        }),
      },
      actions: { publish: (_, event) => void (event && s.publish(event)) },
    });
    this.stop();
    this.pendingTools = 0;
    this.toolSummaries = toolSummaries;
    const actor = createActor(machine, { input });
    this.actor = actor;
    let settle!: () => void;
    this.finishing = new Promise<void>((r) => (settle = r));
    this.settleFinishing = settle;
    const ready = new Promise<PreparedRun>((resolve, reject) => {
      actor.subscribe({
        next: (snap) => {
          if (snap.value === 'runnerRunning' && provider) resolve({ provider, system: [system.instructions, system.memory].filter(Boolean) });
          if (snap.status === 'done') {
            settle();
            if (snap.value === 'failed') reject(cause ?? new Error(failureText(snap.context)));
          }
        },
        error: (err) => {
          settle();
          reject(err);
        },
      });
    });
    actor.start();
    actor.send({ type: 'START' });
    return ready;
  }

  private toolSummaries: string[] = [];

  /** Feeds a task event to the current run's phases (tool calls, usage); the run's end comes through `runEnded`. */
  observe(e: TaskEvent): void {
    const actor = this.actor;
    if (!actor || actor.getSnapshot().status !== 'active') return;
    switch (e.type) {
      case 'tool_call':
        this.pendingTools++;
        actor.send({ type: 'TOOL_EVENT' });
        return;
      case 'tool_result':
        this.toolSummaries.push(e.summary);
        this.pendingTools = Math.max(0, this.pendingTools - 1);
        if (this.pendingTools === 0) actor.send({ type: 'TOOL_EVENTS_DONE' });
        return;
      case 'turn':
        // Back to the model: whatever tool calls were left unanswered are over for this turn.
        if (e.state === 'checkingContext' && this.pendingTools > 0) {
          this.pendingTools = 0;
          actor.send({ type: 'TOOL_EVENTS_DONE' });
        }
        return;
      case 'usage':
        actor.send({ type: 'USAGE', tokens: e.inputTokens + e.outputTokens });
        return;
      default:
        return;
    }
  }

  /**
   * The run's turn loop ended with `status` (the task machine's `finishing`): after a completed
   * run the gatekeeper and the memory write follow; otherwise the phases end. Once per run.
   */
  runEnded(status: TaskStatus): void {
    const actor = this.actor;
    if (actor && actor.getSnapshot().status === 'active' && status !== 'running') actor.send({ type: 'RUN_ENDED', status });
  }

  /** Resolves once the current run's phases are over (completed or failed); at once when none run. */
  finished(): Promise<void> {
    return this.finishing;
  }

  /** The current run's machine state (for tests and `inspect`), or null before the first run. */
  snapshot(): RunPhasesContext | null {
    return this.actor?.getSnapshot().context ?? null;
  }

  /** Ends the current run's phases where they are (`failed`, "stopped"), e.g. when the task is stopped. */
  stop(): void {
    const actor = this.actor;
    if (!actor) return;
    if (actor.getSnapshot().status === 'active') actor.send({ type: 'ABORT', message: 'the task was stopped' });
    actor.stop();
    this.actor = null;
    this.settleFinishing();
  }

  /** The gatekeeper's decision for a completed run: the rules before the lesson call, the call, the rules on the lesson. */
  private async judge(
    start: RunStart,
    provider: ModelProvider | null,
    toolSummaries: string[],
    settings: MemorySettings,
    memory: ProjectMemory | null,
    signal: AbortSignal,
  ): Promise<GatekeeperDecision> {
    const s = this.s;
    const early = beforeLesson({
      memoryEnabled: settings.enabled && memory !== null,
      autoSave: settings.autoSave,
      status: 'completed',
      provider: s.providerKind(),
      subtask: s.subtask,
      loopIteration: s.loopIteration === true,
      memoryFolderProblem: memory?.folderProblem() ?? null,
    });
    if (early) return early;
    if (!provider) return noLesson('no provider for the lesson call');
    // The run's end is told from inside the task machine's transition, while its snapshot may
    // still hold the conversation before the turn's answer was recorded: read it once that
    // transition has finished.
    await Promise.resolve();
    const digest = runDigest(s.conversation(), start.fromMessage, toolSummaries);
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
    const similar = memory!.index.similarCandidates(`${answer.lesson.title}\n${answer.lesson.body}`);
    return judgeLesson(answer.lesson, similar, s.secrets.values());
  }
}

function verdictOf(d: GatekeeperDecision): GatekeeperVerdict {
  return { decision: d.decision, rule: d.rule, reasons: d.reasons, ...(d.lesson ? { lesson: d.lesson } : {}) };
}

function failureText(c: RunPhasesContext): string {
  return c.failure ? `${c.failure.phase}: ${c.failure.message}` : 'the run failed';
}
