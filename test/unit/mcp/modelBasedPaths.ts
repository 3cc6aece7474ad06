import type { AnyMachineSnapshot } from 'xstate';
import { mcpConnectionMachine } from '../../../src/core/machines/mcpConnection/mcpConnection.machine';
import { McpConnectFailure, type McpConnectionContext } from '../../../src/core/machines/mcpConnection/types';
import { doneEvent, errorEvent, transitionPaths, type ModelEvent, type ModelPath } from '../model-based/paths';

/** The mcpConnection machine's model for modelBased.test.ts: events per state and the paths. */
/**
 * One restart allowed; a backoff long enough that the person's events reliably land while the
 * machine waits in `restarting` (the real timer is not under the test's control).
 */
export const LIMITS = { maxRestartAttempts: 1, backoffMs: [2500, 2500], stableAfterMs: 3_600_000 };

/**
 * States where the real system waits for something the test controls, so an event sent there
 * cannot race the machine's own progress: the person's intents are offered only there.
 */
function quiescent(s: AnyMachineSnapshot): boolean {
  const c = s.context as McpConnectionContext;
  const terminalError = s.matches('error') && !(c.retryable && c.attempts <= c.limits.maxRestartAttempts);
  return s.matches('disconnected') || s.matches('disabled') || s.matches('ready') || s.matches('restarting') || terminalError;
}
const INIT = { serverInfo: { name: 'faulty', version: '1.0.0' }, tools: [], resources: [], prompts: [] };

export function eventsOf(s: AnyMachineSnapshot): ModelEvent[] {
  const c = s.context as McpConnectionContext;
  const out: ModelEvent[] = quiescent(s) ? [{ type: 'CONNECT' }, { type: 'RESTART' }, { type: 'DISABLE' }, { type: 'ENABLE' }, { type: 'STOP' }] : [];
  for (const node of s._nodes) {
    for (const inv of node.invoke) {
      if (inv.src === 'openStdio') out.push(doneEvent(inv.id, undefined, 'spawned'), errorEvent(inv.id, new McpConnectFailure('spawn ENOENT'), 'spawn-error'));
      if (inv.src === 'initialize') out.push(doneEvent(inv.id, INIT, 'ok'), errorEvent(inv.id, new McpConnectFailure('exited'), 'exited'));
      if (inv.src === 'closeConnection') out.push(doneEvent(inv.id, undefined, 'closed'));
    }
  }
  if (s.matches('ready')) {
    out.push({ type: 'CONNECTION_LOST', reason: 'killed' }, { type: 'TOOLS_UPDATED', tools: [] });
    if (c.calls.length === 0) out.push({ type: 'CALL_TOOL', callId: 'c1', tool: 'gate', args: {}, timeoutMs: 60_000 });
    else out.push({ type: 'CALL_DONE', callId: 'c1', output: { ok: true, content: [], isError: false, summary: '' }, tag: 'answered' }, { type: 'CANCEL_CALL', callId: 'c1' });
    if (c.reads.length === 0) out.push({ type: 'READ_RESOURCE', callId: 'r1', uri: 'gate://r', timeoutMs: 60_000 });
    else out.push({ type: 'READ_DONE', callId: 'r1', output: { ok: true, contents: [] }, tag: 'answered' });
  }
  if (s.matches('restarting')) out.push({ type: 'xstate.after.restartDelay.mcpConnection.restarting' });
  return out;
}

export function paths(): ModelPath[] {
  return transitionPaths(mcpConnectionMachine, {
    input: { server: 'faulty', transport: 'stdio', limits: LIMITS },
    events: eventsOf,
    context: (s) => {
      const c = s.context as McpConnectionContext;
      return [c.attempts, c.calls.length, c.reads.length, Boolean(c.disabled)];
    },
  });
}

const isOpenOutcome = (e: ModelEvent) => e.tag === 'spawned' || e.tag === 'spawn-error';

/** Whether the server's command must exist for the next spawn at or after step `from`. */
export function commandExists(events: ModelEvent[], from: number): boolean {
  return events.slice(from).find(isOpenOutcome)?.tag !== 'spawn-error';
}

/** What each successful start of the server does, in order: answer initialize, or exit at start. */
export function startModes(events: ModelEvent[]): ('normal' | 'exit-at-start')[] {
  const modes: ('normal' | 'exit-at-start')[] = [];
  events.forEach((e, i) => {
    if (e.tag !== 'spawned') return;
    const init = events.slice(i + 1).find((x) => x.tag === 'ok' || x.tag === 'exited');
    modes.push(init?.tag === 'exited' ? 'exit-at-start' : 'normal');
  });
  return modes;
}

/**
 * Fewer replays for the same coverage: every step of a path is a (state, event, next state)
 * triple. For each triple, the shortest path that ends with it; then a path that is a prefix of
 * another kept path is dropped (the longer one takes the same steps). Replays start real
 * processes, so this keeps the run short without losing a transition.
 */
export function coveringPaths(all: ModelPath[]): ModelPath[] {
  const stepKey = (p: ModelPath, i: number) => JSON.stringify([p.values[i], p.events[i]!.tag ? `${p.events[i]!.type}[${p.events[i]!.tag}]` : p.events[i]!.type, p.values[i + 1]]);
  const best = new Map<string, ModelPath>();
  for (const p of all) {
    if (p.events.length === 0) continue;
    const k = stepKey(p, p.events.length - 1);
    const old = best.get(k);
    if (!old || old.events.length > p.events.length) best.set(k, p);
  }
  const sig = (p: ModelPath) => p.events.map((e) => (e.tag ? `${e.type}[${e.tag}]` : e.type));
  const kept = [...best.values()];
  return kept
    .filter((p) => {
      const a = sig(p);
      return !kept.some((q) => q !== p && q.events.length > p.events.length && a.every((x, i) => sig(q)[i] === x));
    })
    .sort((a, b) => a.events.length - b.events.length);
}
