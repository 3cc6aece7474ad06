import type { AnyMachineSnapshot, InspectionEvent } from 'xstate';
import { appSessionMachine, type AppSessionContext } from '../../../src/core/machines/appSession/appSession.machine';
import { ChatController } from '../../../src/extension/chatController';
import type { KeelSettings } from '../../../src/extension/providerConfig';
import { windowLifetime } from '../../../src/extension/windowLifetime';
import { fakeHost, type FakeTask } from '../extension/fakes';
import type { CoverageRecorder } from './coverage';
import { dedupe, doneEvent, errorEvent, transitionPaths, type ModelEvent, type ModelPath } from './paths';
import { settled as quiesce, withinTurns } from '../helpers/changes';

/**
 * The appSession machine's paths, replayed against the extension window's real wiring without
 * VS Code: `windowLifetime` (the hooks extension.ts uses: the provider setting, the key check of
 * providerConfig.ts, closing the chat) with a ChatController behind it. Queries are prompts the
 * chat starts (each a task of the contract-checked FakeRuntime), settled by the task answering;
 * compaction is a running task's turn compacting; a key is a SecretStorage change; EXIT is the
 * window closing. The key check reads a SecretStorage the replay answers: with a key (done) or
 * without (error). Every replay that exits also checks what a reload must show: every task that
 * had not settled is recorded as interrupted, and the runtime is gone.
 *
 * Not reachable through the window's wiring, so absent from these paths (`UNREACHABLE_HERE`):
 * reading the settings cannot fail (a bad value falls back to its default; `keel run`'s init
 * fails on bad usage, replayed through runCommand in hostWiring.test.ts), and closing the chat
 * does not throw.
 */
export const UNREACHABLE_HERE = ['init -> exit : xstate.error.actor.0.appSession.init', 'saving -> exit : xstate.error.actor.0.appSession.saving'];

const PROVIDERS = ['anthropic', 'openai-compatible'] as const;
const invoked = (s: AnyMachineSnapshot): { id: string; src: string }[] => s._nodes.flatMap((n) => n.invoke.map((i) => ({ id: i.id, src: String(i.src) })));

export function appSessionPaths(): ModelPath[] {
  return transitionPaths(appSessionMachine, {
    input: { provider: 'anthropic' },
    events: (s) => {
      const c = s.context as AppSessionContext;
      // The window's init ends by itself at once (its settings are in memory), and so does the
      // check of a provider that needs no key: nothing else happens before.
      if (s.matches('init')) return invoked(s).map((i) => doneEvent(i.id, { provider: c.provider }, 'ok'));
      if (s.matches({ auth: 'checking' }) && c.provider !== 'anthropic') return invoked(s).map((i) => doneEvent(i.id, undefined, 'no key needed'));
      const evs: ModelEvent[] = [{ type: 'SET_KEY' }, { type: 'QUERY_STARTED' }, { type: 'EXIT' }];
      for (const p of PROVIDERS) if (p !== c.provider) evs.push({ type: 'PROVIDER_CHANGED', provider: p, tag: p });
      // A query settles; while one compacts, only another query can (the compacting one must finish compacting first).
      if (c.activeQueries > 0 && (!s.matches({ active: 'compacting' }) || c.activeQueries >= 2)) evs.push({ type: 'QUERY_SETTLED' });
      if (c.activeQueries > 0) evs.push({ type: 'COMPACTION_STARTED' }, { type: 'COMPACTION_DONE' });
      for (const i of invoked(s)) {
        if (i.src === 'checkAuth') {
          evs.push(doneEvent(i.id, undefined, 'key'));
          // Only Anthropic can lack a key: another provider's check always passes.
          if (c.provider === 'anthropic') evs.push(errorEvent(i.id, new Error('no key'), 'no key'));
        } else {
          evs.push(doneEvent(i.id, i.src === 'loadSettings' ? { provider: c.provider } : undefined, 'ok'));
        }
      }
      return evs;
    },
    context: (s) => {
      const c = s.context as AppSessionContext;
      return [Math.min(2, c.activeQueries), c.provider, c.checkedProvider === c.provider];
    },
  });
}

export interface AppSessionReplay {
  observed: string[];
  expected: string[];
  problems: string[];
  /** The path ends in a state its own actor leaves at once (init, saving, a check that needs no key): the replay goes on past it. */
  prefixOk: boolean;
}

export async function replayAppSession(path: ModelPath, recorder: CoverageRecorder): Promise<AppSessionReplay> {
  const expected = dedupe(path.values);
  const problems: string[] = [];
  const settings: KeelSettings = { provider: 'anthropic', model: '', anthropicBaseUrl: '', openaiBaseUrl: '', defaultMode: 'default' };
  // SecretStorage reads wait for the replay to say whether the key is there.
  const reads: ((key: string | undefined) => void)[] = [];
  const observed: string[] = [];
  const inspect = (e: InspectionEvent) => {
    recorder.inspect(e);
    if (e.type !== '@xstate.snapshot') return;
    const snap = e.snapshot as AnyMachineSnapshot;
    if (snap.machine?.id !== 'appSession') return;
    const v = JSON.stringify(snap.value);
    if (observed.at(-1) !== v) observed.push(v);
  };
  const h = fakeHost();
  const life = windowLifetime({
    settings: () => settings,
    secret: () => new Promise((resolve) => reads.push(resolve)),
    env: {},
    close: () => controller.dispose(),
    log: h.log,
    inspect,
  });
  const controller = new ChatController({ ...h.host, watchTask: (task) => life.app.watch(task) });
  const running = () => h.runtime.tasks.filter((t) => !t.transcript().done);
  let compacting: FakeTask | undefined;
  life.app.start();
  try {
    for (let i = 0; i < path.events.length; i++) {
      const e = path.events[i]!;
      // The state the path says this event finds.
      const at = dedupe(path.values.slice(0, i + 1)).length;
      await withinTurns(() => observed.length >= at);
      // (Further along is fine: init, saving and a check that needs no key finish by themselves.)
      if (observed.length < at) break;
      const m = /^xstate\.(done|error)\.actor\.(.+)$/.exec(e.type);
      if (m) {
        // Only the key check waits for the replay; the other actors finish by themselves.
        if (m[2]!.endsWith('checking') && (life.app.state === 'auth.checking' && settings.provider === 'anthropic')) {
          const read = reads.pop();
          read?.(m[1] === 'done' ? 'sk-ant-replay' : undefined);
        }
        continue;
      }
      switch (e.type) {
        case 'SET_KEY':
          life.keyChanged('keel.apiKey.anthropic');
          break;
        case 'PROVIDER_CHANGED':
          settings.provider = e.provider;
          life.settingsChanged();
          break;
        case 'QUERY_STARTED':
          controller.newTask();
          await controller.prompt(`query ${h.runtime.tasks.length + 1}`);
          break;
        case 'QUERY_SETTLED':
          running().find((t) => t !== compacting)!.answer('done');
          break;
        case 'COMPACTION_STARTED':
          compacting = running()[0]!;
          compacting.emit({ type: 'turn', taskId: compacting.id, state: 'compacting', turn: 1 });
          break;
        case 'COMPACTION_DONE':
          compacting!.emit({ type: 'turn', taskId: compacting!.id, state: 'streaming', turn: 1 });
          compacting = undefined;
          break;
        case 'EXIT': {
          const unsettled = running().map((t) => t.id);
          // Told to end again while saving (a reload during deactivation): the second exit() comes
          // before the first has saved, and both end when the session has.
          if (path.events[i + 1]?.type === 'EXIT' && JSON.stringify(path.values[i + 2]) === '"saving"') {
            const first = life.app.exit();
            i++;
            await Promise.all([first, life.app.exit()]);
          } else await life.app.exit();
          const recorded = h.runtime.interrupted ?? [];
          if (h.runtime.tasks.length > 0 && !h.runtime.disposed) problems.push('the runtime outlived the window');
          for (const id of unsettled) if (!recorded.includes(id)) problems.push(`task ${id} was running when the window closed and is not recorded as interrupted`);
          break;
        }
        default:
          throw new Error(`no way to produce ${e.type}`);
      }
    }
    await withinTurns(() => observed.length >= expected.length);
    await quiesce();
    const last = path.values.at(-1);
    const prefixOk = last === 'init' || last === 'saving' || (JSON.stringify(last) === '{"auth":"checking"}' && settings.provider !== 'anthropic');
    return { observed: observed.slice(), expected, problems, prefixOk };
  } finally {
    for (const read of reads.splice(0)) read(undefined);
    await life.app.exit();
  }
}
