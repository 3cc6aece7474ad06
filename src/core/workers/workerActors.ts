import type { Duplex } from 'node:stream';
import { createActor, fromCallback, type Actor, type EventObject, type InspectionEvent } from 'xstate';
import { ActorWiring } from '../machines/actorWiring';
import { ipcConnectionMachine, type IpcConnectionEvent } from '../machines/ipcConnection/ipcConnection.machine';
import { workerMachine, type WorkerEvent, type WorkerInput } from '../machines/worker/worker.machine';
import { MessageChannel, type ChannelStats } from './channel';
import { envelopeSchema, type Envelope } from './rpc';

/**
 * The real actors of one worker's two machines, each machine provided once per process (not per
 * worker: building a machine for each was most of the cost of starting workers; actorWiring.ts),
 * its actors finding their own worker's wiring by their actor's system:
 *  - the worker machine's `process` (its handle's: the child, its connection, what they say;
 *    workerHandle.ts) and `healthClock` (when to check, when a check went unanswered);
 *  - the ipcConnection machine's `attach` (waits for the launcher to hand over the channel) and
 *    `channel` (the NDJSON connection over it, whose messages go to its owner, `IpcPeer`).
 */

/** The health clock's limits (the pool's options; WorkerTimeouts carries them). */
export interface HealthLimits {
  healthIntervalMs: number;
  healthAnswerMs: number;
  /** The same limit while the worker runs a query (it may be working hard, below the host's priority). */
  busyHealthAnswerMs: number;
}

/**
 * The health clock: HEALTH_DUE every interval; HEALTH_TIMEOUT when a SENT check is not ANSWERED in
 * time **and the worker sent nothing else since**: a worker busy sending (a 50 MB answer in parts)
 * is plainly alive even if its answer to the check waits behind what it is sending. "In time" is
 * `healthAnswerMs` for an idle worker and `busyHealthAnswerMs` for one running a query (SENT says
 * `busy`): a worker runs below the host's CPU priority, and on a machine whose cores are taken by
 * programs at normal priority one that is handling a large answer got ~1/20 of a core and went
 * silent for 10 s (issue 26, item 4) — busy, not stuck. A stuck busy worker is still killed (later),
 * and a cancel kills it after its own grace period (the worker machine's `cancelling`).
 */
function healthClock(t: HealthLimits, lastHeardAt: () => number, sendBack: (e: WorkerEvent) => void, receive: (listener: (e: EventObject) => void) => void): () => void {
  let answerTimer: NodeJS.Timeout | undefined;
  let judging: NodeJS.Immediate | undefined;
  const interval = setInterval(() => {
    if (answerTimer === undefined) sendBack({ type: 'HEALTH_DUE' });
  }, t.healthIntervalMs);
  const settle = () => {
    clearTimeout(answerTimer);
    clearImmediate(judging);
    answerTimer = judging = undefined;
  };
  receive((e) => {
    if (e.type === 'SENT' && answerTimer === undefined) {
      const sentAt = Date.now();
      const ms = (e as EventObject & { busy?: boolean }).busy ? t.busyHealthAnswerMs : t.healthAnswerMs;
      answerTimer = setTimeout(() => {
        // Judged after this turn's I/O: a host that was busy itself runs its timers before it
        // reads what the worker sent meanwhile.
        judging = setImmediate(() => {
          settle();
          if (lastHeardAt() < sentAt) sendBack({ type: 'HEALTH_TIMEOUT', ms });
        });
      }, ms);
    }
    if (e.type === 'ANSWERED') settle();
  });
  return () => {
    clearInterval(interval);
    settle();
  };
}

type Receive = (listener: (e: EventObject) => void) => void;

/** What each worker actor's root actors run: its handle's process, its timeouts' health clock. */
export interface WorkerWiring {
  process(sendBack: (e: WorkerEvent) => void, receive: Receive): () => void;
  timeouts: HealthLimits;
  /** When the worker last sent anything. */
  lastHeardAt(): number;
}
const workers = new ActorWiring<WorkerWiring>('the worker process');

/** The worker machine with its real actors: each actor's `process` and `healthClock` are its own worker's. */
const wiredWorkerMachine = workerMachine.provide({
  actors: {
    process: fromCallback<EventObject, { workerId: string }>(({ sendBack, receive, system }) => workers.of(system).process(sendBack, receive)),
    healthClock: fromCallback<EventObject, { workerId: string }>(({ sendBack, receive, system }) => {
      const wiring = workers.of(system);
      return healthClock(wiring.timeouts, wiring.lastHeardAt, sendBack, receive);
    }),
  },
});

export type WorkerActor = Actor<typeof wiredWorkerMachine>;

/** A worker machine actor (not started) whose actors run `wiring`. */
export function createWorkerActor(input: WorkerInput, wiring: WorkerWiring, inspect?: (event: InspectionEvent) => void): WorkerActor {
  const actor = createActor(wiredWorkerMachine, { input, ...(inspect ? { inspect } : {}) });
  workers.bind(actor, wiring);
  return actor;
}

/**
 * The ipcConnection machine with its real actors for one worker: `attach` waits for the host's
 * end of the worker's inherited channel (handed over by the launcher through `IpcChannelDoor`),
 * `channel` is the NDJSON connection over it (MessageChannel: validated on receipt, bounded,
 * paused when the worker floods). No socket is served anywhere: no other process can join.
 */
export interface IpcLimits {
  maxLineBytes: number;
  highWater?: number;
}

/** The connection's channel as its owner sees it: what it sends to the worker. */
export type IpcChannel = Pick<MessageChannel<Envelope, Envelope>, 'send'>;

/**
 * The owner of one connection (the worker handle): the messages go between the channel and it
 * directly, not through the machine (which holds the lifecycle only; ipcConnection.machine.ts).
 * `opened` comes when the machine enters `connected`, with the channel to send on (until the
 * machine emits `ipc:disconnected`); `message` gets each valid message, in order, never before
 * `opened` nor once the machine has left `connected` (the channel is destroyed as it leaves).
 */
export interface IpcPeer {
  opened(channel: IpcChannel): void;
  /** A function, not a method: the channel calls it as it is. */
  readonly message: (message: Envelope) => void;
  /** The channel's statistics when it closes (back-pressure pauses, longest queue). */
  stats?(stats: ChannelStats): void;
}

/** One connection's own: its limits, its owner, and the stream the launcher hands over. */
interface IpcWiring {
  limits: IpcLimits;
  peer: IpcPeer;
  stream: Duplex | null;
  failure: string | null;
  /** Set while `attach` waits: called when the stream (or its failure) arrives. */
  wake: (() => void) | null;
}

/** Where the launcher hands a worker's channel to its connection (once). */
export interface IpcChannelDoor {
  /** The host's end of the worker's channel. A second call destroys the stream it is given. */
  attach(stream: Duplex): void;
  /** No channel will come (the process could not be started). */
  fail(reason: string): void;
}

/** The two actors, reading their connection's wiring through `wiringOf` (by the actor's system). */
function connectionActors(wiringOf: (system: object) => IpcWiring) {
  return {
    attach: fromCallback<EventObject, { workerId: string }>(({ sendBack, system }) => {
      const wiring = wiringOf(system);
      let live = true;
      const check = () => {
        if (!live) return;
        if (wiring.stream) sendBack({ type: 'ATTACHED' } satisfies IpcConnectionEvent);
        else if (wiring.failure !== null) sendBack({ type: 'ATTACH_FAILED', reason: wiring.failure } satisfies IpcConnectionEvent);
        else return;
        wiring.wake = null;
      };
      wiring.wake = check;
      check();
      return () => {
        live = false;
        if (wiring.wake === check) wiring.wake = null;
      };
    }),
    channel: fromCallback<EventObject, { workerId: string }>(({ sendBack, system }) => {
      const { stream, limits, peer } = wiringOf(system);
      if (!stream) {
        sendBack({ type: 'PEER_CLOSED' } satisfies IpcConnectionEvent);
        return () => undefined;
      }
      let live = true;
      const channel = new MessageChannel<Envelope, Envelope>(stream, {
        schema: envelopeSchema,
        maxLineBytes: limits.maxLineBytes,
        ...(limits.highWater ? { highWater: limits.highWater } : {}),
        // Straight to the owner: the channel delivers nothing once destroyed (as this actor stops).
        onMessage: peer.message,
        onBroken: (reason) => {
          if (live) sendBack({ type: 'VIOLATION', reason } satisfies IpcConnectionEvent);
          live = false;
        },
        onClose: () => {
          if (live) sendBack({ type: 'PEER_CLOSED' } satisfies IpcConnectionEvent);
          live = false;
          peer.stats?.(channel.stats);
        },
      });
      peer.opened(channel);
      return () => {
        live = false;
        peer.stats?.(channel.stats);
        channel.destroy();
      };
    }),
  };
}

const connections = new ActorWiring<IpcWiring>('the worker connection');
/** Provided once per process: each connection's actors find their own wiring by their actor's system. */
const sharedIpcConnectionMachine = ipcConnectionMachine.provide({ actors: connectionActors((system) => connections.of(system)) });

export type IpcConnectionActor = Actor<typeof sharedIpcConnectionMachine>;

/**
 * An ipcConnection actor (not started) for worker `workerId`'s channel, with `limits` and its
 * owner `peer`, on the machine every connection of this process shares (building a machine per
 * connection was a large part of starting a worker; actorWiring.ts), and the door its launcher
 * hands the channel through. A stream handed over while the connection is not waiting for one
 * (it was closed) is destroyed.
 */
export function openIpcConnection(workerId: string, limits: IpcLimits, peer: IpcPeer, inspect?: (event: InspectionEvent) => void): { actor: IpcConnectionActor; door: IpcChannelDoor } {
  const actor = createActor(sharedIpcConnectionMachine, { input: { workerId }, ...(inspect ? { inspect } : {}) });
  const wiring: IpcWiring = { limits, peer, stream: null, failure: null, wake: null };
  connections.bind(actor, wiring);
  const door: IpcChannelDoor = {
    attach(stream) {
      // Only a connection waiting for its channel takes one (not one closed before it came).
      if (wiring.stream || wiring.failure !== null || actor.getSnapshot().status !== 'active' || actor.getSnapshot().value !== 'connecting') {
        stream.destroy();
        return;
      }
      wiring.stream = stream;
      wiring.wake?.();
    },
    fail(reason) {
      if (wiring.stream || wiring.failure !== null) return;
      wiring.failure = reason;
      wiring.wake?.();
    },
  };
  return { actor, door };
}
