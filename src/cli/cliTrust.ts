import { heldEvent, heldNoticeLines, itemLines } from '../core/trust/describe';
import { WorkspaceTrust } from '../core/trust/workspaceTrust';
import type { RunArgs } from './args';

/**
 * The trust of a headless run's workspace (`keel run`, `keel loop`, `keel batch`;
 * docs/permissions.md, "Trust"). A run never approves by itself: at its start it says on stderr —
 * and, with `--output-format stream-json`, as a `{"type":"trust"}` line on stdout — what the
 * workspace provides that it holds back and how to approve it (`keel trust approve`); whatever is
 * held back later (a hook whose script changed during the run) is said the same way, once.
 * `--approve-project-hooks` is the person approving it all before the run, as `keel trust
 * approve` would, and printing what it approved.
 */
export async function openCliTrust(args: Pick<RunArgs, 'workspace' | 'storage' | 'outputFormat' | 'approveProjectHooks'>): Promise<WorkspaceTrust> {
  const trust = new WorkspaceTrust({ workspace: args.workspace, keelHome: args.storage });
  const warn = (line: string) => process.stderr.write(`keel: ${line}\n`);
  const approveCommand = `keel trust approve --workspace ${quote(args.workspace)} --storage ${quote(args.storage)}`;
  const showCommand = `keel trust show --workspace ${quote(args.workspace)} --storage ${quote(args.storage)}`;
  if (args.approveProjectHooks) {
    const before = trust.status();
    const approved = (await trust.approve(before.manifest)) ?? [];
    if (approved.length) {
      warn(`approved ${approved.length} item${approved.length === 1 ? '' : 's'} of ${args.workspace} (--approve-project-hooks), exactly as they are now:`);
      for (const i of approved) process.stderr.write(`${itemLines(before, i).join('\n')}\n`);
    }
  }
  const status = trust.status();
  const lines = heldNoticeLines(status, showCommand, approveCommand);
  if (lines.length) {
    warn(lines[0]!);
    for (const l of lines.slice(1)) process.stderr.write(`${l}\n`);
    if (args.outputFormat === 'stream-json') process.stdout.write(`${JSON.stringify(heldEvent(status, showCommand, approveCommand))}\n`);
  }
  // Said once: what the start already listed is not repeated when a consumer holds it back.
  trust.markReported([...status.pending, ...status.blocked]);
  trust.onHeld((items) => {
    const later = trust.status();
    const shown = { ...later, pending: items.filter((i) => !i.blocked?.length), blocked: items.filter((i) => i.blocked?.length) };
    const more = heldNoticeLines(shown, showCommand, approveCommand);
    if (!more.length) return;
    warn(more[0]!);
    for (const l of more.slice(1)) process.stderr.write(`${l}\n`);
    if (args.outputFormat === 'stream-json') process.stdout.write(`${JSON.stringify(heldEvent(shown, showCommand, approveCommand))}\n`);
  });
  return trust;
}

function quote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
