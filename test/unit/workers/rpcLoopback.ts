import { validate } from '../../../src/core/workers/channel';
import { toHost, toWorker, type ToHost, type ToWorker } from '../../../src/core/workers/protocol';
import { envelopeSchema, RpcEndpoint, type Envelope, type Handlers } from '../../../src/core/workers/rpc';

/**
 * The two ends of the host ↔ worker protocol in one process, for tests of what crosses it: each
 * message is JSON-encoded, decoded, checked against the envelope and delivered on a later turn of
 * the event loop, as over the channel; each end checks params and results against the
 * declarations (protocol.ts) as over a real connection. Handlers not given refuse ("unexpected").
 */
export function loopback(host: Partial<Handlers<ToHost>> = {}, worker: Partial<Handlers<ToWorker>> = {}) {
  const problems: string[] = [];
  const violations: string[] = [];
  const wire = (to: () => { receive(m: Envelope): void }) => (m: Envelope) => {
    setImmediate(() => {
      const v = validate(envelopeSchema, JSON.parse(JSON.stringify(m)) as unknown);
      if (v.ok) to().receive(v.message);
      else problems.push(v.problem);
    });
    return true;
  };
  const hostEnd: RpcEndpoint<ToHost, ToWorker> = new RpcEndpoint<ToHost, ToWorker>(wire(() => workerEnd), toHost, toWorker, { ...unexpectedAtHost(), ...host }, (r) => violations.push(`host: ${r}`));
  const workerEnd: RpcEndpoint<ToWorker, ToHost> = new RpcEndpoint<ToWorker, ToHost>(wire(() => hostEnd), toWorker, toHost, { ...unexpectedAtWorker(), ...worker }, (r) => violations.push(`worker: ${r}`));
  return { host: hostEnd, worker: workerEnd, problems, violations };
}

const unexpected = (what: string) => () => Promise.reject(new Error(`unexpected ${what}`));
const ignored = () => undefined;

function unexpectedAtHost(): Handlers<ToHost> {
  return {
    ready: ignored,
    session: ignored,
    event: ignored,
    subtaskStart: ignored,
    hookEvent: ignored,
    hookLog: ignored,
    hookStop: ignored,
    permission: unexpected('permission'),
    durable: unexpected('durable'),
    budget: unexpected('budget'),
    mcpList: unexpected('mcpList'),
    mcpCall: unexpected('mcpCall'),
  };
}

/** A worker end's handlers that refuse every request (for an endpoint built on its own). */
export function loopbackWorkerHandlers(): Handlers<ToWorker> {
  return unexpectedAtWorker();
}

function unexpectedAtWorker(): Handlers<ToWorker> {
  return { query: unexpected('query'), health: unexpected('health'), shutdown: unexpected('shutdown'), setMode: ignored, subtaskResult: ignored };
}
