import { describe, expect, it } from 'vitest';
import { LockCancelledError, LockManager, LockTimeoutError, taskLockKey, type HeldLock } from '../../../src/core/locks/lockManager';

/** Resolves after every pending microtask and one macrotask: lets queued acquisitions settle. */
const tick = () => new Promise<void>((r) => setImmediate(r));

describe('LockManager: one holder per key', () => {
  it('serialises holders of one key in arrival order and counts who had to wait', async () => {
    const locks = new LockManager();
    const order: string[] = [];
    const first = await locks.acquire('k');
    const second = locks.acquire('k').then((l) => (order.push('second'), l));
    const third = locks.acquire('k').then((l) => (order.push('third'), l));
    await tick();
    expect(order).toEqual([]);
    first.release();
    (await second).release();
    (await third).release();
    expect(order).toEqual(['second', 'third']);
    expect(locks.counters).toMatchObject({ acquired: 3, waited: 2, timedOut: 0, cancelled: 0 });
    expect(locks.isLocked('k')).toBe(false);
  });

  it('keys are independent', async () => {
    const locks = new LockManager();
    const a = await locks.acquire(taskLockKey('a'));
    const b = await locks.acquire(taskLockKey('b'));
    expect(locks.isLocked(taskLockKey('a')) && locks.isLocked(taskLockKey('b'))).toBe(true);
    a.release();
    b.release();
    expect(locks.counters.waited).toBe(0);
  });

  it('a timed-out waiter gets LockTimeoutError and holds nothing afterwards', async () => {
    const locks = new LockManager();
    const holder = await locks.acquire('k');
    const err = await locks.acquire('k', { timeoutMs: 20 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockTimeoutError);
    expect((err as LockTimeoutError).code).toBe('lock_timeout');
    expect(locks.counters.timedOut).toBe(1);
    holder.release();
    await tick();
    // The timed-out waiter never took the lock: it is free, and the next comer gets it at once.
    expect(locks.isLocked('k')).toBe(false);
    (await locks.acquire('k', { timeoutMs: 20 })).release();
  });

  it('the constructor default timeout applies when a call gives none', async () => {
    const locks = new LockManager(15);
    const holder = await locks.acquire('k');
    await expect(locks.acquire('k')).rejects.toBeInstanceOf(LockTimeoutError);
    holder.release();
  });

  it('an abort while waiting rejects with LockCancelledError; a later grant is handed straight back', async () => {
    const locks = new LockManager();
    const holder = await locks.acquire('k');
    const controller = new AbortController();
    const waiting = locks.acquire('k', { signal: controller.signal });
    const next = locks.acquire('k');
    await tick();
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(LockCancelledError);
    expect(locks.counters.cancelled).toBe(1);
    holder.release();
    // The cancelled waiter's turn is passed on: the waiter behind it gets the lock.
    const got = await next;
    expect(locks.isLocked('k')).toBe(true);
    got.release();
    await tick();
    expect(locks.isLocked('k')).toBe(false);
  });

  it('an already aborted signal is refused without waiting', async () => {
    const locks = new LockManager();
    const controller = new AbortController();
    controller.abort();
    await expect(locks.acquire('k', { signal: controller.signal })).rejects.toBeInstanceOf(LockCancelledError);
    expect(locks.isLocked('k')).toBe(false);
    expect(locks.counters.acquired).toBe(0);
  });

  it('is not reentrant: a holder that asks again for its own key waits (here: times out), so holders pass their token down', async () => {
    const locks = new LockManager();
    const outcome = await locks.runExclusive('task:t', async (held) => {
      const again = await locks.acquire('task:t', { timeoutMs: 20 }).then(
        () => 'acquired twice',
        (e: unknown) => (e instanceof LockTimeoutError ? 'timed out' : String(e)),
      );
      // The token is the proof of holding: work done "under the lock" takes it instead of re-acquiring.
      const underLock = (token: HeldLock) => `${token.key} held: ${locks.isLocked(token.key)}`;
      return { again, inner: underLock(held) };
    });
    expect(outcome).toEqual({ again: 'timed out', inner: 'task:t held: true' });
    await tick();
    expect(locks.isLocked('task:t')).toBe(false);
  });

  it('release is idempotent: a second release never frees the next holder', async () => {
    const locks = new LockManager();
    const a = await locks.acquire('k');
    const bPromise = locks.acquire('k');
    a.release();
    const b = await bPromise;
    a.release();
    expect(locks.isLocked('k')).toBe(true);
    const c = locks.acquire('k', { timeoutMs: 20 });
    await expect(c).rejects.toBeInstanceOf(LockTimeoutError);
    b.release();
  });

  it('keeps no entry for a key nobody holds or waits for, after timeouts and cancellations too', async () => {
    const locks = new LockManager();
    for (let i = 0; i < 20; i++) {
      const holder = await locks.acquire(`k${i}`);
      const controller = new AbortController();
      const cancelled = locks.acquire(`k${i}`, { signal: controller.signal });
      const timedOut = locks.acquire(`k${i}`, { timeoutMs: 5 });
      controller.abort();
      await Promise.allSettled([cancelled, timedOut]);
      holder.release();
    }
    await tick();
    expect(locks.activeKeys()).toBe(0);
    expect(locks.counters).toMatchObject({ acquired: 20, cancelled: 20, timedOut: 20 });
  });

  it('runExclusive releases however its function ends', async () => {
    const locks = new LockManager();
    await expect(
      locks.runExclusive('k', () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(locks.isLocked('k')).toBe(false);
    expect(await locks.runExclusive('k', async () => 7)).toBe(7);
  });
});

describe('LockManager: continuations', () => {
  it('blocks a duplicate continuation in a scope and counts it; other scopes are independent', () => {
    const locks = new LockManager();
    expect(locks.beginContinuation('task:a', 'r1:c0')).toBe(true);
    expect(locks.hasContinuation('task:a', 'r1:c0')).toBe(true);
    expect(locks.beginContinuation('task:a', 'r1:c0')).toBe(false);
    expect(locks.beginContinuation('task:b', 'r1:c0')).toBe(true);
    expect(locks.counters.duplicatesBlocked).toBe(1);
    locks.recordDuplicate();
    expect(locks.counters.duplicatesBlocked).toBe(2);
  });

  it('endScope forgets a scope\'s keys (and only that scope\'s), so nothing piles up', () => {
    const locks = new LockManager();
    for (let i = 0; i < 100; i++) locks.beginContinuation('task:a', `k${i}`);
    locks.beginContinuation('task:b', 'k0');
    expect(locks.continuationScopes()).toBe(2);
    locks.endScope('task:a');
    expect(locks.continuationScopes()).toBe(1);
    expect(locks.hasContinuation('task:a', 'k0')).toBe(false);
    expect(locks.hasContinuation('task:b', 'k0')).toBe(true);
    expect(locks.beginContinuation('task:a', 'k0')).toBe(true);
    locks.endScope('task:a');
    locks.endScope('task:a');
    locks.endScope('task:b');
    expect(locks.continuationScopes()).toBe(0);
  });
});
