import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPermissionEngine } from '../../../src/core/permissions/engine';
import type { PermissionRequest } from '../../../src/core/permissions/gate';
import { saveApprovedRules } from '../../../src/core/trust/savedRules';
import { WorkspaceTrust } from '../../../src/core/trust/workspaceTrust';
import { parseRule } from '../../../src/core/permissions/rules';
import { PermissionBroker, type PromptAnswer, type PromptSurface } from '../../../src/extension/permissionBroker';
import { alwaysRules } from '../../../src/extension/permissions/alwaysAllow';
import { proposedTitle, requestIdOfQuery } from '../../../src/extension/permissions/proposal';
import { riskyPromptText } from '../../../src/extension/permissions/riskyText';
import { waitingIndicator } from '../../../src/extension/permissions/waiting';
import { rulesOfText } from '../../../webview/components/PermissionCard';
import { MemoryLogger } from './fakes';

/** A surface the test answers by hand; records what it showed and what was withdrawn. */
class HandSurface implements PromptSurface {
  readonly shown: string[] = [];
  readonly withdrawn: string[] = [];
  private readonly answers = new Map<string, (a: PromptAnswer | undefined) => void>();
  constructor(
    readonly source: PromptSurface['source'],
    readonly when: PromptSurface['when'],
    private readonly filter: (r: PermissionRequest) => boolean,
    /** Like a modal: withdrawing does not close it (a late answer may still come). */
    private readonly closable = true,
  ) {}
  applies(r: PermissionRequest): boolean {
    return this.filter(r);
  }
  show(r: PermissionRequest, signal: AbortSignal): Promise<PromptAnswer | undefined> {
    this.shown.push(r.requestId);
    return new Promise((resolve) => {
      this.answers.set(r.requestId, resolve);
      signal.addEventListener('abort', () => {
        this.withdrawn.push(r.requestId);
        if (this.closable) resolve(undefined);
      });
    });
  }
  answer(id: string, a: PromptAnswer | undefined): void {
    this.answers.get(id)?.(a);
  }
}

const edit = (id: string): PermissionRequest => ({
  requestId: id,
  taskId: 't1',
  toolCallId: `c-${id}`,
  tool: 'Edit',
  input: { file_path: 'a.ts', old_string: 'a', new_string: 'b' },
  subject: { kind: 'write', tool: 'Edit', paths: ['/w/a.ts'], summary: 'Edit a.ts', diff: { path: '/w/a.ts', before: 'a\n', after: 'b\n' } },
  reason: 'editing a file',
  suggestedRules: ['Edit(./a.ts)'],
});
const bash = (id: string, command: string, over: Partial<PermissionRequest> = {}): PermissionRequest => ({
  requestId: id,
  taskId: 't1',
  toolCallId: `c-${id}`,
  tool: 'Bash',
  input: { command },
  subject: { kind: 'execute', tool: 'Bash', command, cwd: '/w', summary: command },
  reason: 'running a command no rule allows',
  ...over,
});

function setup(visible = true) {
  const log = new MemoryLogger();
  const editor = new HandSurface('editor', 'atOnce', (r) => r.subject.kind === 'write');
  const dialog = new HandSurface('dialog', 'atOnce', (r) => r.risky === true, false);
  const notification = new HandSurface('notification', 'noVisibleView', () => true);
  const warnings: string[] = [];
  const resolved: string[] = [];
  const broker = new PermissionBroker({
    log,
    surfaces: [editor, dialog, notification],
    hasVisibleView: () => visible,
    checkRule: (r) => {
      const p = parseRule(r);
      return p.ok ? undefined : p.error;
    },
    warn: (m) => warnings.push(m),
  });
  broker.listen({ requested: () => undefined, resolved: (id, d, s) => resolved.push(`${id} ${d} ${s}`) });
  return { broker, editor, dialog, notification, warnings, resolved, log };
}

describe('permission prompts: one id on every surface, first answer wins', () => {
  it('an edit opens the diff editor with the card; Accept there allows and closes the card', async () => {
    const s = setup();
    const answer = s.broker.ask(edit('e1'), new AbortController().signal);
    expect(s.editor.shown).toEqual(['e1']);
    expect(s.dialog.shown).toEqual([]);
    expect(s.notification.shown).toEqual([]);
    s.editor.answer('e1', { decision: 'allow' });
    expect(await answer).toEqual({ decision: 'allow' });
    expect(s.resolved).toEqual(['e1 allow editor']);
    expect(s.broker.answer('e1', 'deny')).toMatchObject({ refused: 'notPending' });
  });

  it('a card answer first withdraws the diff editor (the tab closes)', async () => {
    const s = setup();
    const answer = s.broker.ask(edit('e2'), new AbortController().signal);
    expect(s.broker.answer('e2', 'deny', 'rename it instead')).toBe(true);
    expect(await answer).toEqual({ decision: 'deny', feedback: 'rename it instead' });
    expect(s.editor.withdrawn).toEqual(['e2']);
  });

  it('closing the diff editor answers nothing: the card still decides', async () => {
    const s = setup();
    const answer = s.broker.ask(edit('e3'), new AbortController().signal);
    s.editor.answer('e3', undefined);
    await Promise.resolve();
    expect(s.broker.isPending('e3')).toBe(true);
    s.broker.answer('e3', 'allow');
    expect(await answer).toEqual({ decision: 'allow' });
  });

  it('a risky command also gets the modal; its late answer after the card won is ignored', async () => {
    const s = setup();
    const answer = s.broker.ask(bash('b1', 'sudo ls', { risky: true }), new AbortController().signal);
    expect(s.dialog.shown).toEqual(['b1']);
    expect(s.editor.shown).toEqual([]);
    s.broker.answer('b1', 'deny');
    expect(await answer).toMatchObject({ decision: 'deny' });
    s.dialog.answer('b1', { decision: 'allow' });
    await new Promise((r) => setTimeout(r, 0));
    expect(s.resolved).toEqual(['b1 deny card']);
  });

  it('the modal answering first wins; a plain command shows no modal', async () => {
    const s = setup();
    const risky = s.broker.ask(bash('b2', 'curl http://x', { risky: true }), new AbortController().signal);
    s.dialog.answer('b2', { decision: 'allow' });
    expect(await risky).toEqual({ decision: 'allow' });
    expect(s.resolved).toEqual(['b2 allow dialog']);
    void s.broker.ask(bash('b3', 'touch x'), new AbortController().signal);
    expect(s.dialog.shown).toEqual(['b2']);
  });

  it('with no visible view the notification asks too, once', async () => {
    const s = setup(false);
    void s.broker.ask(edit('e4'), new AbortController().signal);
    s.broker.viewsGone();
    expect(s.notification.shown).toEqual(['e4']);
    expect(s.editor.shown).toEqual(['e4']);
  });

  it('an "Always allow" rule that does not parse is refused and the prompt keeps waiting', () => {
    const s = setup();
    void s.broker.ask(bash('b4', 'touch x', { suggestedRules: ['Bash(touch:*)'] }), new AbortController().signal);
    const r = s.broker.answer('b4', 'allowAlways', undefined, { rules: ['Bash(touch'], where: 'local' });
    expect(r).toMatchObject({ refused: 'badRule' });
    expect(s.broker.isPending('b4')).toBe(true);
  });

  it('without a way to save, "Always allow" allows once and says why', async () => {
    const s = setup();
    const a = s.broker.ask(bash('b5', 'touch x', { suggestedRules: ['Bash(touch:*)'] }), new AbortController().signal);
    s.broker.answer('b5', 'allowAlways');
    expect(await a).toEqual({ decision: 'allow' });
    expect(s.warnings[0]).toMatch(/could not save the rule/);
  });
});

describe('"Always allow" with the real engine and settings files', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('saves to .keel/settings.local.json and the next identical command is allowed without a prompt (the person\'s rule counts as approved)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-always-'));
    const workspace = dir;
    const home = join(dir, 'home');
    const trust = new WorkspaceTrust({ workspace, keelHome: join(home, '.keel'), home });
    const engine = await createPermissionEngine({ workspace, home, trust });
    const call = { tool: 'Bash', input: { command: 'touch made.txt' }, subject: { kind: 'execute' as const, tool: 'Bash', command: 'touch made.txt', cwd: workspace, summary: 'touch made.txt' }, readOnly: false };
    expect((await engine.decide(call, 'default')).decision).toBe('ask');
    const broker = new PermissionBroker({ log: new MemoryLogger(), hasVisibleView: () => true, saveRules: (rules, where) => saveApprovedRules(rules, where, { workspace, home, trust }) });
    const answer = broker.ask(bash('s1', 'touch made.txt', { suggestedRules: ['Bash(touch:*)'] }), new AbortController().signal);
    broker.answer('s1', 'allowAlways');
    expect(await answer).toEqual({ decision: 'allow', always: { rules: ['Bash(touch:*)'], where: 'local' } });
    expect(JSON.parse(readFileSync(join(workspace, '.keel', 'settings.local.json'), 'utf8'))).toEqual({ permissions: { allow: ['Bash(touch:*)'] } });
    expect(readFileSync(join(workspace, '.keel', '.gitignore'), 'utf8')).toContain('settings.local.json');
    expect(await engine.decide(call, 'default')).toMatchObject({ decision: 'allow' });
    // The rule covers touch only.
    expect((await engine.decide({ ...call, input: { command: 'rm made.txt' }, subject: { ...call.subject, command: 'rm made.txt' } }, 'default')).decision).toBe('ask');
    engine.dispose?.();
    trust.dispose();
  });
});

describe('pure helpers of the prompts', () => {
  it('alwaysRules: edited rules trimmed and deduplicated, else every suggestion; a bad rule fails', () => {
    const check = (r: string) => {
      const p = parseRule(r);
      return p.ok ? undefined : p.error;
    };
    expect(alwaysRules({ rules: [' Bash(ls:*) ', 'Bash(ls:*)'], where: 'user' }, ['X'], check)).toEqual({ ok: true, rules: ['Bash(ls:*)'] });
    expect(alwaysRules(undefined, ['Bash(git add:*)', 'Bash(git commit:*)'], check)).toEqual({ ok: true, rules: ['Bash(git add:*)', 'Bash(git commit:*)'] });
    expect(alwaysRules({ rules: ['  '], where: 'local' }, [], check)).toMatchObject({ ok: false });
    expect(alwaysRules({ rules: ['bash('], where: 'local' }, [], check)).toMatchObject({ ok: false, error: expect.stringContaining('not a valid rule') });
  });

  it('the proposed document names its request; titles say what waits', () => {
    expect(requestIdOfQuery(`request=${encodeURIComponent('a b/c')}`)).toBe('a b/c');
    expect(requestIdOfQuery('x=1&request=r9')).toBe('r9');
    expect(requestIdOfQuery('x=1')).toBeUndefined();
    expect(requestIdOfQuery('request=%E0%A4%A')).toBeUndefined();
    expect(proposedTitle('/w/src/a.ts', true)).toBe('a.ts (proposed by Keel, new file) — Accept or Reject');
  });

  it('the waiting indicator counts prompts and clears when none waits', () => {
    expect(waitingIndicator([])).toBeUndefined();
    const p = { requestId: 'r', taskId: 't', toolCallId: 'c', tool: 'Bash', input: {}, summary: 'touch x', reason: 'r' };
    expect(waitingIndicator([p])).toMatchObject({ text: '$(shield) Keel: waiting for permission', count: 1 });
    expect(waitingIndicator([p, { ...p, requestId: 'r2' }])).toMatchObject({ count: 2, text: expect.stringContaining('(2)') });
  });

  it('the modal shows the exact command and why, without repeating the rule', () => {
    const t = riskyPromptText(bash('m', 'sudo rm -rf /tmp/x', { risky: true, reason: 'asks (rule Bash(sudo:*))', rule: 'Bash(sudo:*)' }));
    expect(t.detail).toContain('sudo rm -rf /tmp/x');
    expect(t.detail.match(/Bash\(sudo:\*\)/g)).toHaveLength(1);
  });

  it('the card reads one rule per line', () => {
    expect(rulesOfText(' Bash(a:*)\n\n Bash(b)  \n')).toEqual(['Bash(a:*)', 'Bash(b)']);
  });
});
