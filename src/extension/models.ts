/** Claude models offered by "Keel: Select Model" (any other id can be typed with "Custom…"). */
export const KNOWN_MODELS: ReadonlyArray<{ id: string; description: string }> = [
  { id: 'claude-sonnet-5-5', description: 'Balanced (default)' },
  { id: 'claude-opus-5-5', description: 'Most capable' },
  { id: 'claude-haiku-5-5', description: 'Fastest' },
  { id: 'claude-sonnet-4-6', description: 'Previous Sonnet' },
];
