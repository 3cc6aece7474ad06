import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnyMachineSnapshot, InspectionEvent } from 'xstate';
import { sandboxMachine, type SandboxInput } from '../../../src/core/machines/sandbox/sandbox.machine';
import { Sandbox } from '../../../src/core/sandbox/sandbox';
import type { SandboxSettings } from '../../../src/core/sandbox/settings';
import { createBashTool } from '../../../src/core/tools/bash';
import { makeContext, makeTempDir } from '../tools/helpers';
import type { CoverageRecorder } from './coverage';
import { dedupe, doneEvent, errorEvent, invokeIds, transitionPaths, type ModelPath } from './paths';

/**
 * The sandbox machine's model. Its guards read the command's facts (the sandbox on or off, the
 * platform, a call asking to leave, an excluded prefix, an allow-list), so paths are generated
 * from one input per kind of command; its two actors' completions (the bwrap probe: usable,
 * unusable, failing; the proxy: started, failing) are events of the paths. A replay runs the real
 * Bash tool through a real `Sandbox` whose real actors are steered only by real conditions:
 * bwrap at its real path, a path where nothing is installed, a path no process can start from;
 * the proxy in the temp folder, or under a file, where it cannot make its folder.
 */
export type Variant = 'off' | 'notLinux' | 'leave' | 'excluded' | 'plain' | 'network';

const VARIANTS: Record<Variant, Omit<SandboxInput, 'command' | 'excludedCommands'>> = {
  off: { enabled: false, platform: 'linux', dangerouslyDisableSandbox: false, networkAllowed: false },
  notLinux: { enabled: true, platform: 'darwin', dangerouslyDisableSandbox: false, networkAllowed: false },
  leave: { enabled: true, platform: 'linux', dangerouslyDisableSandbox: true, networkAllowed: false },
  excluded: { enabled: true, platform: 'linux', dangerouslyDisableSandbox: false, networkAllowed: false },
  plain: { enabled: true, platform: 'linux', dangerouslyDisableSandbox: false, networkAllowed: false },
  network: { enabled: true, platform: 'linux', dangerouslyDisableSandbox: false, networkAllowed: true },
};

/** The command of a variant: only `excluded`'s is a lone excluded command (`touch` is excluded in every variant). */
const commandOf = (variant: Variant, marker: string) => (variant === 'excluded' ? `touch ${marker}` : `touch ${marker}; echo "proxy=\${HTTPS_PROXY:-none}"`);

export interface SandboxPath extends ModelPath {
  variant: Variant;
}

export function sandboxPaths(): SandboxPath[] {
  const byKey = new Map<string, SandboxPath>();
  for (const variant of Object.keys(VARIANTS) as Variant[]) {
    const input: SandboxInput = { ...VARIANTS[variant], command: commandOf(variant, '/m'), excludedCommands: ['touch'] };
    const paths = transitionPaths(sandboxMachine, {
      input,
      events: (s: AnyMachineSnapshot) =>
        invokeIds(s).flatMap((id) =>
          id === 'probeBwrap'
            ? [doneEvent(id, { available: true, bwrap: '/usr/bin/bwrap' }, 'usable'), doneEvent(id, { available: false, reason: 'not installed' }, 'unusable'), errorEvent(id, new Error('probe'))]
            : [doneEvent(id, { socketPath: '/s' }, 'started'), errorEvent(id, new Error('proxy'))],
        ),
    });
    // Only complete runs: every prefix is part of one.
    for (const p of paths) {
      // A run without actors is told apart by its variant only (several end in `settled` at once).
      const key = `${JSON.stringify(p.values)}|${p.events.map((e) => e.tag).join()}|${p.events.length === 0 ? variant : ''}`;
      if (isFinal(p) && !byKey.has(key)) byKey.set(key, { ...p, variant });
    }
  }
  return [...byKey.values()];
}

function isFinal(p: ModelPath): boolean {
  const last = JSON.stringify(p.values.at(-1));
  return ['"settled"', '"disabled"', '"unsupported"'].includes(last);
}

/** What must happen, from the model alone (never from the machine under test). */
export type Expected = 'direct' | 'wrapped' | 'wrappedWithProxy' | 'refused';

export function expectedOutcome(path: SandboxPath): Expected {
  const tags = path.events.map((e) => e.tag);
  switch (path.variant) {
    case 'off':
    case 'leave':
    case 'excluded':
      return 'direct';
    case 'notLinux':
      return 'refused';
    case 'plain':
    case 'network':
      if (!tags.includes('usable')) return 'refused';
      if (path.variant === 'plain') return 'wrapped';
      return tags.includes('started') ? 'wrappedWithProxy' : 'refused';
  }
}

export interface SandboxReplay {
  observed: string[];
  expected: string[];
  outcome: Expected;
  /** For failure messages. */
  content: string;
}

/** Runs the path's command through the real Bash tool and the real sandbox, and reports what happened. */
export async function replaySandbox(path: SandboxPath, recorder: CoverageRecorder): Promise<SandboxReplay> {
  const tags = path.events.map((e) => e.tag);
  const failing = path.events.find((e) => e.type.startsWith('xstate.error.actor.'))?.type.replace('xstate.error.actor.', '');
  const ws = makeTempDir('keel-mbt-sbx-ws-');
  // Outside the workspace and outside the temp folder (which the sandbox replaces by a tmpfs).
  const outside = mkdtempSync('/var/tmp/keel-mbt-sbx-out-');
  const blocker = join(outside, 'not-a-folder');
  writeFileSync(blocker, '');
  const marker = join(outside, 'marker');
  const v = VARIANTS[path.variant];
  const settings: SandboxSettings = {
    enabled: v.enabled,
    excludedCommands: ['touch'],
    ...(v.networkAllowed ? { network: { allowedDomains: ['allowed.test'] } } : {}),
    ...(tags.includes('unusable') ? { bwrapPath: '/nonexistent/bwrap' } : failing === 'probeBwrap' ? { bwrapPath: 'bwrap\0' } : {}),
  };
  const observed: string[] = [];
  let root: unknown;
  const sandbox = new Sandbox(settings, {
    platform: v.platform,
    ...(failing === 'startProxy' ? { runtimeDir: blocker } : {}),
    inspect: (e: InspectionEvent) => {
      recorder.inspect(e);
      if (e.type !== '@xstate.snapshot') return;
      const snap = e.snapshot as AnyMachineSnapshot;
      if (snap.machine?.id !== 'sandbox') return;
      root ??= e.actorRef;
      if (e.actorRef !== root) return;
      const value = JSON.stringify(snap.value);
      if (observed.at(-1) !== value) observed.push(value);
    },
  });
  try {
    const r = await createBashTool({ sandbox }).invoke({ command: commandOf(path.variant, marker), dangerouslyDisableSandbox: v.dangerouslyDisableSandbox }, makeContext(ws.dir));
    const ran = existsSync(marker);
    let outcome: Expected;
    if (r.summary === 'sandbox unavailable' && !ran) outcome = 'refused';
    else if (ran && !r.isError) outcome = 'direct';
    else if (!ran && /Read-only file system/.test(r.content)) outcome = /proxy=http:\/\/127\.0\.0\.1:\d+/.test(r.content) ? 'wrappedWithProxy' : 'wrapped';
    else outcome = 'refused';
    return { observed, expected: dedupe(path.values), outcome, content: r.content };
  } finally {
    await sandbox.dispose();
    ws.cleanup();
    rmSync(outside, { recursive: true, force: true });
  }
}
