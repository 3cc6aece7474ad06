import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, setup, type EventObject } from 'xstate';
import { ActorWiring } from '../../../src/core/machines/actorWiring';

/**
 * One machine provided once, many actors: each actor's implementations (and those of the actors
 * it invokes) use its own wiring, never another actor's, and an actor that was never wired says so.
 */
interface Wiring {
  name: string;
  seen: string[];
}

function counterMachine(wirings: ActorWiring<Wiring>) {
  return setup({
    types: { events: {} as { type: 'PING' } | { type: 'PONG'; from: string } },
    actors: {
      // An invoked child: it shares its root's system, so it finds its root's wiring.
      echo: fromCallback<EventObject>(({ sendBack, receive, system }) => {
        const w = wirings.of(system);
        receive(() => sendBack({ type: 'PONG', from: w.name }));
      }),
    },
  }).createMachine({
    invoke: { id: 'echo', src: 'echo' },
    on: {
      PING: { actions: ({ self }) => self.getSnapshot().children.echo?.send({ type: 'PING' }) },
      PONG: { actions: ({ event, system }) => wirings.of(system).seen.push(event.from) },
    },
  });
}

describe('ActorWiring', () => {
  it('gives each actor of a shared machine its own wiring, in its invoked actors too', () => {
    const wirings = new ActorWiring<Wiring>('the echo');
    const machine = counterMachine(wirings);
    const a = createActor(machine);
    const b = createActor(machine);
    const wa: Wiring = { name: 'a', seen: [] };
    const wb: Wiring = { name: 'b', seen: [] };
    wirings.bind(a, wa);
    wirings.bind(b, wb);
    a.start();
    b.start();
    a.send({ type: 'PING' });
    b.send({ type: 'PING' });
    b.send({ type: 'PING' });
    expect(wa.seen).toEqual(['a']);
    expect(wb.seen).toEqual(['b', 'b']);
  });

  it('refuses to wire an actor twice, and names the wiring an unwired actor lacks', () => {
    const wirings = new ActorWiring<Wiring>('the echo');
    const machine = counterMachine(wirings);
    const a = createActor(machine);
    wirings.bind(a, { name: 'a', seen: [] });
    expect(() => wirings.bind(a, { name: 'again', seen: [] })).toThrow(/already wired/);
    expect(() => wirings.of(createActor(machine).system)).toThrow(/the echo is not wired for this actor/);
  });
});
