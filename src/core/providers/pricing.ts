import type { Usage } from '../../shared/domain/messages';

/** USD per million tokens. Cache writes are the 5-minute ephemeral rate (1.25× input). */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

const price = (input: number, output: number): ModelPrice => ({ input, output, cacheRead: input / 10, cacheWrite: input * 1.25 });

/**
 * Anthropic list prices by model family, most specific first. Matched against the model id with
 * any vendor prefix ("anthropic/", "us.anthropic.") and date or version suffix ignored.
 * Long-context (>200k) surcharges are not modelled.
 */
const PRICES: { pattern: RegExp; price: ModelPrice }[] = [
  { pattern: /opus-4-[5-9]|opus-[5-9]/, price: price(5, 25) },
  { pattern: /opus-4|opus-3|3-opus/, price: price(15, 75) },
  { pattern: /sonnet-[3-9]|[3-9]-[0-9]-sonnet|3-sonnet/, price: price(3, 15) },
  { pattern: /haiku-4|haiku-[5-9]/, price: price(1, 5) },
  { pattern: /3-5-haiku|haiku-3-5/, price: { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 } },
  { pattern: /3-haiku|haiku-3/, price: { input: 0.25, output: 1.25, cacheRead: 0.03, cacheWrite: 0.3 } },
];

/** The price of a model, or undefined for a model that is not a known Claude model. */
export function priceOf(model: string): ModelPrice | undefined {
  const id = model.toLowerCase();
  if (!id.includes('claude')) return undefined;
  return PRICES.find((p) => p.pattern.test(id))?.price;
}

/** Cost in USD of one response's usage. Unknown models (local, demo, scripted) cost 0. */
export function costUsd(model: string, usage: Usage): number {
  const p = priceOf(model);
  if (!p) return 0;
  return (
    (usage.inputTokens * p.input + usage.outputTokens * p.output + usage.cacheReadTokens * p.cacheRead + usage.cacheWriteTokens * p.cacheWrite) /
    1_000_000
  );
}
