import { afterAll, describe, expect, it } from 'vitest';
import { ipcConnectionMachine } from '../../../src/core/machines/ipcConnection/ipcConnection.machine';
import { workerMachine } from '../../../src/core/machines/worker/worker.machine';
import { ipcPaths, replayIpc } from './ipcModel';
import { queryMachine } from '../../../src/core/machines/query/query.machine';
import { queryPaths, replayQuery } from './queryModel';
import { CoverageRecorder, formatCoverage } from './coverage';
import { replayWorker, workerPaths } from './workerModel';

/**
 * Model-based tests of the worker-pool machines: paths generated from each definition with
 * xstate/graph, replayed against real child processes (the fake worker speaks the real protocol
 * over its inherited socketpair); coverage of every state and transition measured from the real actors.
 */
const recorder = new CoverageRecorder();
const label = (events: { type: string; tag?: string }[]) => events.map((e) => (e.tag ? `${e.type}[${e.tag}]` : e.type.replace(/^xstate\.after\.(\w+)\..*$/, 'after:$1'))).join(' › ');

describe('model-based: worker (real processes)', () => {
  const paths = workerPaths();
  it.each(paths.map((p) => [label(p.events), p] as const))('%s', async (_name, path) => {
    const r = await replayWorker(path, recorder);
    expect(r.observed).toEqual(r.expected);
    // Whatever way it died, no process of it is left.
    expect(r.pidGone).toBe(true);
  });
  afterAll(() => process.stdout.write(`\nModel-based coverage (real actors):\n${formatCoverage(recorder.report(workerMachine))}\n`));
  it('every state and transition of the worker machine was taken by the real actors', () => {
    const c = recorder.report(workerMachine);
    expect({ states: c.states.missing, transitions: c.transitions.missing }).toEqual({ states: [], transitions: [] });
  });
});

describe('model-based: ipcConnection (a real socketpair)', () => {
  const paths = ipcPaths();
  it.each(paths.map((p) => [label(p.events), p] as const))('%s', async (_name, path) => {
    const r = await replayIpc(path, recorder);
    expect(r.observed).toEqual(r.expected);
    if (path.events.some((e) => e.type === 'VIOLATION')) expect(r.reason).toMatch(/protocol violation: a line that is not JSON/);
    if (path.events.some((e) => e.type === 'RECEIVED')) expect(r.received).toEqual(['ready']);
  });
  it('every state and transition of the ipcConnection machine was taken by the real actors', () => {
    const c = recorder.report(ipcConnectionMachine);
    process.stdout.write(`${formatCoverage(c)}\n`);
    expect({ states: c.states.missing, transitions: c.transitions.missing }).toEqual({ states: [], transitions: [] });
  });
});

describe('model-based: query (real pool and worker processes)', () => {
  const paths = queryPaths();
  it.each(paths.map((p) => [label(p.events), p] as const))('%s', async (_name, path) => {
    const r = await replayQuery(path, recorder);
    expect(r.observed).toEqual(r.expected);
    const end = JSON.parse(r.expected.at(-1)!) as string;
    // What the task machine gets back, as a user would see it.
    if (end === 'complete') expect(r.output.status).toBe('done');
    if (end === 'cancelled') expect(r.output.error?.code).toBe('cancelled');
    if (end === 'rejected') expect(r.output.error?.code).toBe('worker_unavailable');
    if (end === 'error' && path.events.at(-1)?.type === 'WORKER_LOST') expect(r.output.error?.message).toMatch(/stopped .*interrupted; resume it/);
    if (path.events.some((e) => e.type === 'WORKER_EVENT')) expect(r.published).toContain('text');
    // A worker whose conversation is not the one it streamed is not believed.
    if (path.events.at(-1)?.tag === 'differs') expect(r.output.error?.message).toMatch(/ended the turn with 999 messages, but sent 1/);
  });
  it('every state and transition of the query machine was taken by the real actors', () => {
    const c = recorder.report(queryMachine);
    process.stdout.write(`${formatCoverage(c)}\n`);
    expect({ states: c.states.missing, transitions: c.transitions.missing }).toEqual({ states: [], transitions: [] });
  });
});
