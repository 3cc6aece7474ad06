/**
 * What each actor of a machine needs of its own (its process, its socket, its callbacks), for a
 * machine that is provided once per process rather than once per actor.
 *
 * Why: `machine.provide(...)` builds a whole new machine — every state node again — and a new
 * machine computes its transitions again on first use. A pool starting four workers provided
 * the worker and ipcConnection machines for each of them, which was most of the host's longest
 * turn (docs/benchmarks.md, pool: the start turn). A machine provided once, with implementations
 * that look their actor's wiring up here, is built once and keeps each actor's own wiring.
 *
 * Contract: `bind` an actor before it starts; then `of(system)`, called from an implementation
 * running in that actor or in any actor it invokes or spawns (they share its system), returns
 * exactly what was bound to it — never another actor's. `of` throws for an actor never bound (a
 * machine used without its wiring), naming what is missing. A binding lives as long as its actor
 * (weakly held by the actor's system).
 */
export class ActorWiring<W extends object> {
  private readonly bound = new WeakMap<object, W>();

  /** `what`: the wiring's name in the error for an unbound actor ("the worker process"). */
  constructor(private readonly what: string) {}

  /** Binds `wiring` to `actor` (a root actor, not started yet). Throws if it already has one. */
  bind(actor: { readonly system: object }, wiring: W): void {
    if (this.bound.has(actor.system)) throw new Error(`${this.what} is already wired for this actor`);
    this.bound.set(actor.system, wiring);
  }

  /** The wiring of the actor whose `system` this is. */
  of(system: object): W {
    const wiring = this.bound.get(system);
    if (!wiring) throw new Error(`${this.what} is not wired for this actor`);
    return wiring;
  }
}
