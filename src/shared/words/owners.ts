/**
 * Who else drives a task or a loop, in words a person knows ("another VS Code window", "a keel run
 * in a terminal"), never a process id: the lock's owner label is Keel's own ("VS Code window
 * 4242", "keel run", "keel loop", "keel batch").
 */
export function ownerWords(label: string | undefined): string {
  if (!label) return 'another window or process';
  if (/^VS Code window\b/.test(label)) return 'another VS Code window';
  const cli = /^keel (run|loop|batch)\b/.exec(label);
  if (cli) return `a keel ${cli[1]} in a terminal`;
  return label;
}

/**
 * "another VS Code window (since 10:31)", "a keel run in a terminal on build-box (since 09:02)":
 * the owner in words, the machine only when it is not this one, and since when (`time` formats
 * an epoch ms for people, e.g. "10:31").
 */
export function describeOwnerWords(owner: { label?: string | undefined; host?: string; since?: number }, thisHost: string, time: (epochMs: number) => string): string {
  const where = owner.host && owner.host !== '?' && owner.host !== thisHost ? ` on ${owner.host}` : '';
  const since = owner.since ? ` (since ${time(owner.since)})` : '';
  return `${ownerWords(owner.label)}${where}${since}`;
}
