import { Headers as SpecHeaders } from 'fetch-headers';

/**
 * Web globals for a pool's worker process that do not load Node's bundled undici.
 *
 * In Node 20, `Headers`, `FormData`, `Request`, `Response` and `fetch` are lazy globals: the first
 * touch of any of them evaluates all of undici (~9 MB resident in a bare Node, more once `fetch`
 * runs). The SDKs touch two of them on every request even with a `fetch` of their own
 * (`nodeFetch.ts`): they build the request's headers with `new Headers()` and test the body with
 * `instanceof FormData`. So the worker entry (src/cli/worker.ts, nothing else) replaces those two:
 *
 * - `Headers` becomes `fetch-headers`' class: a small one (6 KB, no dependencies) written to the
 *   Fetch standard and tested against its platform tests — names lower-cased and checked, values
 *   stripped of HTTP whitespace and checked (a TypeError otherwise), entries sorted by name,
 *   `getSetCookie`. (`headers-polyfill` was measured and not taken: it sorts with
 *   `localeCompare`, whose first call loads ICU's collation data, +3 MB resident, and it drops
 *   an invalid or untrimmed value silently.) A `Headers` made by undici (a `fetch` of a tool in
 *   the worker) is not `instanceof` it; it is read through its methods as before.
 * - `FormData` becomes a stand-in that loads nothing until used: `x instanceof FormData` is
 *   false while undici is not loaded (nothing can be one of its forms then), and `new FormData()`
 *   loads undici and returns the real one; from then on `instanceof` answers for the real class.
 *
 * `Request`, `Response` and `fetch` keep Node's lazy definitions (touching them loads undici,
 * exactly as before). Installing twice is harmless.
 */
export function installLeanFetchGlobals(): void {
  // (Reading `globalThis.Headers` itself would run Node's getter and load undici.)
  if (Object.getOwnPropertyDescriptor(globalThis, 'Headers')?.value === SpecHeaders) return;
  const realFormData = lazyGlobal('FormData');
  Object.defineProperty(globalThis, 'Headers', { value: SpecHeaders, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(globalThis, 'FormData', { value: deferredFormData(realFormData), writable: true, configurable: true, enumerable: false });
}

/** The getter Node defined for a lazy global, or undefined when it is not one (already a value). */
function lazyGlobal(name: 'FormData'): () => unknown {
  const d = Object.getOwnPropertyDescriptor(globalThis, name);
  if (d?.get) {
    const get = d.get;
    return () => get.call(globalThis);
  }
  const value: unknown = d?.value;
  return () => value;
}

type Constructor = new (...args: unknown[]) => object;

/** A `FormData` global that defers loading the real one (see {@link installLeanFetchGlobals}). */
function deferredFormData(load: () => unknown): Constructor {
  let real: Constructor | undefined;
  const loadReal = (): Constructor => {
    real ??= load() as Constructor;
    return real;
  };
  return class FormData {
    constructor(...args: unknown[]) {
      // A constructor may return another object: the caller gets undici's real FormData.
      return new (loadReal())(...args);
    }

    static [Symbol.hasInstance](value: unknown): boolean {
      return real !== undefined && value instanceof real;
    }
  };
}
