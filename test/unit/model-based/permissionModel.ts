import type { AnyMachineSnapshot } from 'xstate';
import type { PermissionMode } from '../../../src/shared/domain/permissionModes';
import { permissionMachine, type PermissionInput } from '../../../src/core/machines/permission/permission.machine';
import { toolTurn } from '../helpers/scriptedEvents';
import { dedupe, doneEvent, errorEvent, transitionPaths, type ModelEvent, type ModelPath } from './paths';
import { emptyScript, TASK_ID, type Script } from './system';

/**
 * The permission machine's model: the engine's decisions (allow, deny, ask, or a failure) and the
 * person's answers (once, always, deny, or a failed prompt) are the completions of its two actors.
 * Replayed as the product runs it: a model's tool call in the wired task system, decided by the
 * real engine on a workspace whose settings deny `rm` (system.ts), so each engine decision comes
 * from a call the engine really decides that way: Read a.txt (allowed), `rm a.txt` (denied by
 * rule), `touch b.txt` (asks). Only an engine that fails has no real producer: it is injected.
 */
export interface PermissionVariant {
  name: string;
  mode: PermissionMode;
  /** What the traversal starts from (the call's own fields matter only to checkMode). */
  input: PermissionInput;
  /** The model's call that makes the real engine decide as the path's first event says. */
  call: (decision: string) => { name: string; input: Record<string, unknown> };
}

const base = { taskId: TASK_ID, requestId: 'r', toolCallId: 'c' };
const BY_DECISION: Record<string, { name: string; input: Record<string, unknown> }> = {
  allow: { name: 'Read', input: { file_path: 'a.txt' } },
  deny: { name: 'Bash', input: { command: 'rm a.txt' } },
  ask: { name: 'Bash', input: { command: 'touch b.txt' } },
  error: { name: 'Bash', input: { command: 'touch b.txt' } },
  none: { name: 'Read', input: { file_path: 'a.txt' } },
};

export const PERMISSION_VARIANTS: PermissionVariant[] = [
  {
    name: 'default mode',
    mode: 'default',
    input: { ...base, tool: 'Bash', input: { command: 'make' }, subject: { kind: 'execute', tool: 'Bash', command: 'make', cwd: '/w', summary: 'make' }, readOnly: false, mode: 'default' },
    call: (decision) => BY_DECISION[decision]!,
  },
  {
    // checkMode refuses a change before any rule is read.
    name: 'plan mode',
    mode: 'plan',
    input: { ...base, tool: 'Write', input: {}, subject: { kind: 'write', tool: 'Write', paths: ['/w/c.txt'], summary: 'write c.txt' }, readOnly: false, mode: 'plan' },
    call: () => ({ name: 'Write', input: { file_path: 'c.txt', content: 'x' } }),
  },
];

const ANSWERS = { once: 'allow', always: 'always', deny: 'deny', error: 'reject' } as const;

function events(s: AnyMachineSnapshot): ModelEvent[] {
  const evs: ModelEvent[] = [];
  for (const node of s._nodes) {
    for (const inv of node.invoke) {
      if (inv.src === 'evaluate') {
        for (const d of ['allow', 'deny', 'ask'] as const) evs.push(doneEvent(inv.id, { decision: d, reason: `engine says ${d}` }, d));
        evs.push(errorEvent(inv.id, new Error('engine broke')));
      } else {
        evs.push(
          doneEvent(inv.id, { decision: 'allow' }, 'once'),
          doneEvent(inv.id, { decision: 'allow', always: { rules: ['Bash(touch:*)'], where: 'local' } }, 'always'),
          doneEvent(inv.id, { decision: 'deny', feedback: 'no' }, 'deny'),
          errorEvent(inv.id, new Error('prompt failed')),
        );
      }
    }
  }
  return evs;
}

export function permissionPaths(variant: PermissionVariant): ModelPath[] {
  return transitionPaths(permissionMachine, { input: variant.input, events });
}

export function compilePermission(path: ModelPath, variant: PermissionVariant): { script: Script; expected: string[]; prefixOk: boolean } {
  const script = emptyScript();
  script.init = ['ok'];
  script.mode = variant.mode;
  const [first, second] = path.events;
  const decision = first?.tag ?? 'none';
  if (decision === 'error') script.injected = { engine: ['reject'] };
  const call = variant.call(decision);
  script.provider.push({ events: toolTurn('toolu_p', call.name, call.input) });
  if (second) script.asker.push(ANSWERS[second.tag as keyof typeof ANSWERS]);
  // The real engine answers at once: a path that ends before its decision is a prefix.
  return { script, expected: dedupe(path.values), prefixOk: path.events.length === 0 && variant.mode === 'default' };
}
