import { describe, expect, it } from 'vitest';
import { AppLifetime, type AppLifetimeHooks } from '../../../src/core/machines/appSession/appLifetime';
import { FakeRuntime } from '../extension/fakes';

/** A host's lifetime through the appSession machine, with hooks that record what they were asked. */
function lifetime(over: Partial<AppLifetimeHooks> = {}) {
  const saves: number[] = [];
  let key: string | undefined;
  const states: string[] = [];
  const app = new AppLifetime(
    {
      loadSettings: async () => ({ provider: 'anthropic' }),
      checkAuth: async () => {
        if (!key) throw new Error('no key');
      },
      save: () => void saves.push(saves.length + 1),
      ...over,
    },
    { provider: 'anthropic', onState: (s) => states.push(s) },
  );
  return { app, saves, states, setKey: (k: string | undefined) => (key = k) };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('AppLifetime: a host process through the appSession machine', () => {
  it('a missing key waits in auth.missing; a stored key makes the session active', async () => {
    const l = lifetime();
    l.app.start();
    expect(await l.app.ready()).toBe('auth.missing');
    expect(l.app.authProblem).toBe('no key');
    l.setKey('sk');
    l.app.keySet();
    expect(await l.app.ready()).toBe('active.idle');
    expect(l.states).toEqual(['init', 'auth.checking', 'auth.missing', 'auth.checking', 'active.idle']);
  });

  it('counts each run of a task as one query, and its compaction', async () => {
    const l = lifetime();
    l.setKey('sk');
    l.app.start();
    await l.app.ready();
    const runtime = new FakeRuntime();
    const a = runtime.startTask({ prompt: 'a', provider: { provider: 'demo', model: 'demo' } });
    const b = runtime.startTask({ prompt: 'b', provider: { provider: 'demo', model: 'demo' } });
    l.app.watch(a);
    l.app.watch(a);
    l.app.watch(b);
    await tick();
    expect(l.app.state).toBe('active.querying');
    a.emit({ type: 'turn', taskId: a.id, state: 'compacting', turn: 1 });
    expect(l.app.state).toBe('active.compacting');
    b.answer('b done');
    expect(l.app.state).toBe('active.compacting');
    a.emit({ type: 'turn', taskId: a.id, state: 'streaming', turn: 1 });
    expect(l.app.state).toBe('active.querying');
    a.answer('a done');
    expect(l.app.state).toBe('active.idle');
    // A follow-up is the next query of the same task.
    a.sendUserMessage('more');
    expect(l.app.state).toBe('active.querying');
    a.cancel();
    await tick();
    expect(l.app.state).toBe('active.idle');
  });

  it('a query may run without a key (the task reports it); the key is checked again once idle', async () => {
    const l = lifetime();
    l.app.start();
    await l.app.ready();
    const runtime = new FakeRuntime();
    const t = runtime.startTask({ prompt: 'no key yet', provider: { provider: 'anthropic', model: 'm' } });
    l.app.watch(t);
    await tick();
    expect(l.app.state).toBe('active.querying');
    l.setKey('sk');
    t.fail('no_api_key', 'No Anthropic API key is set.');
    expect(await l.app.ready()).toBe('active.idle');
    // Idle is passed through at once: the key is checked before anything else happens.
    expect(l.states.slice(-4)).toEqual(['auth.missing', 'active.querying', 'auth.checking', 'active.idle']);
  });

  it('exit saves once from any state, synchronously inside the first call, and ends in exit', async () => {
    const l = lifetime();
    l.setKey('sk');
    l.app.start();
    await l.app.ready();
    const first = l.app.exit();
    expect(l.saves).toEqual([1]);
    const second = l.app.exit();
    await Promise.all([first, second, l.app.exited]);
    expect(l.saves).toEqual([1]);
    expect(l.app.state).toBe('exit');
  });

  it('ends in exit when saving fails, and when exit comes before the settings are read', async () => {
    const failing = lifetime({
      save: () => {
        throw new Error('disk full');
      },
    });
    failing.app.start();
    await failing.app.exit();
    expect(failing.app.state).toBe('exit');
    const early = lifetime({ loadSettings: () => new Promise(() => undefined) });
    early.app.start();
    expect(early.app.state).toBe('init');
    await early.app.exit();
    expect(early.saves).toEqual([1]);
  });

  it('settings that cannot be loaded end the session at init, without saving anything', async () => {
    const l = lifetime({ loadSettings: async () => Promise.reject(new Error('--mode must be one of …')) });
    l.app.start();
    expect(await l.app.ready()).toBe('exit');
    await l.app.exited;
    expect(l.app.startupProblem).toBe('--mode must be one of …');
    expect(l.saves).toEqual([]);
  });

  it('a provider changed while a query runs is checked once the session is idle', async () => {
    const checked: string[] = [];
    const l = lifetime({ checkAuth: async (p) => void checked.push(p) });
    l.app.start();
    await l.app.ready();
    const t = new FakeRuntime().startTask({ prompt: 'x', provider: { provider: 'demo', model: 'demo' } });
    l.app.watch(t);
    await tick();
    l.app.providerChanged('openai-compatible');
    expect(l.app.state).toBe('active.querying');
    t.answer('ok');
    expect(await l.app.ready()).toBe('active.idle');
    expect(checked).toEqual(['anthropic', 'openai-compatible']);
  });
});
