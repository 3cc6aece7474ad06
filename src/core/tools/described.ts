import * as z from 'zod/mini';

/**
 * `schema` with `description` in zod's global registry, which `z.toJSONSchema` reads: what the
 * model is told about a tool's input field (classic zod's `.describe`). The tools' input schemas
 * are built with `zod/mini` — a worker builds them all, and a classic schema carries dozens of
 * method closures (docs/benchmarks.md, pool). Returns `schema` itself.
 */
export function described<T extends z.core.$ZodType>(schema: T, description: string): T {
  z.globalRegistry.add(schema, { description });
  return schema;
}
