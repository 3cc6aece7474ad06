import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createActor, type AnyMachineSnapshot } from 'xstate';
import { mcpConnectionMachine } from '../../../src/core/machines/mcpConnection/mcpConnection.machine';
import type { McpConnectionContext } from '../../../src/core/machines/mcpConnection/types';
import { McpConnectionIo } from '../../../src/core/mcp/connectionIo';
import { DEFAULT_MCP_LIMITS } from '../../../src/core/mcp/limits';
import { CoverageRecorder, formatCoverage } from '../model-based/coverage';
import { dedupe, type ModelPath } from '../model-based/paths';
import { commandExists, coveringPaths, LIMITS, paths, startModes } from './modelBasedPaths';
import { FAULTY, tempDir } from './helpers';
import { Changes, eventually, watchDir } from '../helpers/changes';

/**
 * Model-based tests of the mcpConnection machine: paths generated from its definition with
 * xstate/graph (every reachable transition once), each replayed against a REAL stdio server
 * (test/fixtures/mcp/faultyServer.mjs) through the real actors (McpConnectionIo on the SDK).
 * Each model event becomes something done to the real world: a spawn failure is a command that
 * does not exist, a failed initialize a server that exits at start, a lost connection `kill -9`,
 * a list change SIGHUP, a finished call or read SIGUSR2 / SIGWINCH to the server; the person's
 * intents (CONNECT, RESTART, DISABLE, ENABLE, STOP) and the hub's (CALL_TOOL, READ_RESOURCE,
 * CANCEL_CALL) are sent as the hub sends them. The observed states must be the model's.
 */
const recorder = new CoverageRecorder();


async function replayPath(path: ModelPath): Promise<{ observed: string[]; expected: string[] }> {
  const dir = tempDir('keel-mcp-mbt-');
  const log = join(dir, 'log.jsonl');
  const next = join(dir, 'next');
  const command = join(dir, 'node');
  const io = new McpConnectionIo({
    name: 'faulty',
    spec: { transport: 'stdio', command, args: [FAULTY, '--log', log, '--next', next], env: {} },
    cwd: dir,
    limits: { ...DEFAULT_MCP_LIMITS, ...LIMITS, connectTimeoutMs: 20_000 },
    env: process.env,
    clientInfo: { name: 'keel-test', version: '0' },
    log: () => {},
  });
  const actor = createActor(mcpConnectionMachine.provide({ actors: io.actors() }), { input: { server: 'faulty', transport: 'stdio', limits: LIMITS }, inspect: recorder.inspect });
  const observed: string[] = [];
  // Every wait is on an event (the machine's snapshots, the server's log file), never on the clock.
  const changes = new Changes();
  const serverLog = watchDir(dir);
  actor.subscribe((s) => {
    const v = JSON.stringify(s.value);
    if (observed.at(-1) !== v) observed.push(v);
    changes.notify();
  });
  const waitFor = (ok: (s: AnyMachineSnapshot) => boolean, what: string) => changes.until(() => ok(actor.getSnapshot()), () => `${what}; state ${JSON.stringify(actor.getSnapshot().value)}`);
  const expectedSoFar = dedupe(path.values);
  const diverged = () => observed.some((v, i) => i < expectedSoFar.length && v !== expectedSoFar[i]);
  const logged = (event: string) => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter((l) => l.includes(`"event":"${event}"`)) : []);
  const pid = () => (JSON.parse(logged('started').at(-1) ?? '{"pid":0}') as { pid: number }).pid;
  /** Waits until the server has the request in hand (a signal sent earlier would open no gate). */
  const arrived = async (event: 'called' | 'read') => {
    const want = event === 'called' ? callsSent : readsSent;
    await eventually(() => logged(event).length >= want, () => `the server never got the ${event === 'called' ? 'call' : 'read'}`, serverLog);
  };
  let callsSent = 0;
  let readsSent = 0;
  /** Every call and read the machine took ends with one callDone (an answer, or none). */
  const ended: string[] = [];
  actor.on('callDone', (e) => ended.push(e.callId));
  let taken = 0;
  writeFileSync(next, startModes(path.events).join('\n'));
  actor.start();
  try {
    for (let i = 0; i < path.events.length; i++) {
      const e = path.events[i]!;
      rmSync(command, { force: true });
      if (commandExists(path.events, i)) symlinkSync(process.execPath, command);
      const before = actor.getSnapshot().context as McpConnectionContext;
      switch (e.type) {
        case 'CONNECT':
        case 'RESTART':
        case 'DISABLE':
        case 'ENABLE':
        case 'STOP':
          actor.send({ type: e.type });
          break;
        case 'CANCEL_CALL':
          actor.send({ type: 'CANCEL_CALL', callId: 'c1' });
          break;
        case 'CALL_TOOL':
        case 'READ_RESOURCE': {
          actor.send(e.type === 'CALL_TOOL' ? { type: 'CALL_TOOL', callId: 'c1', tool: 'gate', args: {}, timeoutMs: 60_000 } : { type: 'READ_RESOURCE', callId: 'r1', uri: 'gate://r', timeoutMs: 60_000 });
          if (e.type === 'CALL_TOOL') callsSent++;
          else readsSent++;
          const c = actor.getSnapshot().context as McpConnectionContext;
          if (c.calls.length + c.reads.length > before.calls.length + before.reads.length) taken++;
          break;
        }
        case 'CONNECTION_LOST':
          process.kill(pid(), 'SIGKILL');
          break;
        case 'TOOLS_UPDATED':
          process.kill(pid(), 'SIGHUP');
          await waitFor((s) => (s.context as McpConnectionContext).initialized?.tools.some((t) => t.name === 'added') ?? false, 'the refreshed tools');
          break;
        case 'CALL_DONE':
          await arrived('called');
          process.kill(pid(), 'SIGUSR2');
          await waitFor((s) => (s.context as McpConnectionContext).calls.length < before.calls.length, 'the call to end');
          break;
        case 'READ_DONE':
          await arrived('read');
          process.kill(pid(), 'SIGWINCH');
          await waitFor((s) => (s.context as McpConnectionContext).reads.length < before.reads.length, 'the read to end');
          break;
        default:
          // Completions of invoked actors and the restart timer: the real world does them.
          break;
      }
      // Wait until the real machine has gone through as many states as the model did (states
      // such as `stdio` pass quickly; the comparison at the end says whether they were the same).
      const want = dedupe(path.values.slice(0, i + 2)).length;
      await changes.until(() => observed.length >= want || diverged(), () => `${observed.join(' → ')} / ${expectedSoFar.join(' → ')}`);
      if (diverged()) break;
    }
  } finally {
    actor.stop();
    await io.close();
  }
  const inFlight = (actor.getSnapshot().context as McpConnectionContext).calls.length + (actor.getSnapshot().context as McpConnectionContext).reads.length;
  expect(ended.length + inFlight).toBe(taken);
  const expected = dedupe(path.values);
  // After the last step the real machine may go on (stdio → initializing → ready): compare the
  // states the model named.
  return { observed: observed.slice(0, expected.length), expected };
}

/**
 * What these stdio replays cannot take, by the catalog's name, and why (where another test takes
 * it, which). The coverage test fails when this list is stale (a replay takes one now) or short.
 */
const HTTP_TRANSPORT = 'needs an HTTP server: referenceServers.test.ts "Streamable HTTP: connects…" and "…falls back to SSE", faults.test.ts "answers 500" / "answers 401" / "an SSE stream that cannot open"';
const SIGN_IN = 'an OAuth sign-in exists only for remote servers: oauth.test.ts, against a real loopback authorization server';
const NOT_REPLAYED_STATES: Record<string, string> = {
  streamableHttp: HTTP_TRANSPORT,
  sse: HTTP_TRANSPORT,
  needsAuthorization: SIGN_IN,
};
const NOT_REPLAYED: Record<string, string> = {
  'connecting -> sse : always [usesSse]': HTTP_TRANSPORT,
  'connecting -> streamableHttp : always': HTTP_TRANSPORT,
  'streamableHttp -> initializing : xstate.done.actor.0.mcpConnection.streamableHttp': HTTP_TRANSPORT,
  'streamableHttp -> needsAuthorization : xstate.error.actor.0.mcpConnection.streamableHttp [needsSignIn]': SIGN_IN,
  'streamableHttp -> error : xstate.error.actor.0.mcpConnection.streamableHttp': 'needs a URL the transport refuses, which the configuration loader never lets through: no test takes it',
  'sse -> initializing : xstate.done.actor.0.mcpConnection.sse': HTTP_TRANSPORT,
  'sse -> needsAuthorization : xstate.error.actor.0.mcpConnection.sse [needsSignIn]': SIGN_IN,
  'sse -> error : xstate.error.actor.0.mcpConnection.sse': HTTP_TRANSPORT,
  'initializing -> sse : xstate.error.actor.0.mcpConnection.initializing [canFallBackToSse]': HTTP_TRANSPORT,
  'initializing -> needsAuthorization : xstate.error.actor.0.mcpConnection.initializing [needsSignIn]': SIGN_IN,
  'ready -> (stays) : CANCEL_CALL [isNotInFlight]': 'the model sends CANCEL_CALL only for its call in flight: a cancel that finds none (late) is not generated; no test takes it',
  'ready -> ready.toolCall : CANCEL_CALL [callsRemain]': 'the model keeps one call in flight (each replay starts real processes): machineCalls.test.ts takes the end of one of two calls',
  'ready -> connecting : CALL_DONE [sessionExpired]': 'an expired session is an HTTP one: faults.test.ts "an expired session"',
  'ready -> ready.toolCall : CALL_DONE [callsRemain]': 'one call in flight in the model: machineCalls.test.ts',
  'ready -> ready.resourceRead : READ_DONE [readsRemain]': 'one read in flight in the model: machineCalls.test.ts',
  'ready -> (stays) : RESOURCES_UPDATED': 'the fixture server has no trigger for a resources list change (SIGHUP changes its tools): no test takes it',
  'ready -> (stays) : PROMPTS_UPDATED': 'the fixture server has no trigger for a prompts list change: no test takes it',
  'ready -> needsAuthorization : AUTHORIZATION_REQUIRED': SIGN_IN,
  'ready -> (stays) : xstate.after.stableAfter.mcpConnection.ready': 'the replays run with stableAfterMs an hour (LIMITS) so a restart backoff stays observable; no test waits for it',
  'needsAuthorization -> connecting : SIGNED_IN': SIGN_IN,
  'needsAuthorization -> connecting : RESTART': SIGN_IN,
};

const generated = coveringPaths(paths());
const label = (p: ModelPath) => p.events.map((e) => (e.tag ? `${e.type.replace(/^xstate\.(done|error)\.actor\.(0\.mcpConnection\.)?/, '$1:').replace(/:invocation\[\d+\]|\.mcpConnection\.restarting/g, '')}[${e.tag}]` : e.type.replace('xstate.after.', 'after:'))).join(' › ');

describe('model-based: mcpConnection against a real stdio server', () => {
  it.each(generated.map((p) => [label(p), p] as const))('%s', async (_name, path) => {
    const { observed, expected } = await replayPath(path);
    expect(observed).toEqual(expected);
  }, 120_000);

  afterAll(() => {
    process.stdout.write(`\n${formatCoverage(recorder.report(mcpConnectionMachine))}\n`);
  });

  it('covers every state and transition a stdio server can reach; each one it cannot is listed with the reason', () => {
    const c = recorder.report(mcpConnectionMachine);
    expect(c.states.missing).toEqual(Object.keys(NOT_REPLAYED_STATES));
    expect(c.transitions.missing).toEqual(Object.keys(NOT_REPLAYED));
  });
});
