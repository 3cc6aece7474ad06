// @vitest-environment happy-dom
import { h, render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import type { PendingPermission } from '../../../src/shared/protocol/chatMessages';
import { parseFromWebview } from '../../../src/shared/protocol/fromWebview';
import { PermissionCard } from '../../../webview/components/PermissionCard';

/**
 * The permission card's per-hunk review, in a real DOM: each change of a proposed Edit is shown
 * with Apply / Leave out / Edit, usable with the keyboard, and "Allow as reviewed" sends the
 * choices in a message the host accepts.
 */
const BEFORE = 'one\ntwo\nthree\nfour\n';
const AFTER = 'ONE\ntwo\nthree\nFOUR\n';
const request: PendingPermission = {
  requestId: 'r1',
  taskId: 't1',
  toolCallId: 'c1',
  tool: 'Edit',
  input: { file_path: 'a.txt' },
  summary: 'Edit a.txt',
  reason: 'editing a file',
  diff: { path: 'a.txt', before: BEFORE, after: AFTER },
};

let root: HTMLElement | undefined;
afterEach(() => {
  if (root) render(null, root);
  root?.remove();
  root = undefined;
});

function mount() {
  const sent: unknown[] = [];
  root = document.createElement('div');
  document.body.appendChild(root);
  act(() => {
    render(
      h(PermissionCard, {
        request,
        otherTask: false,
        onAnswer: (requestId, decision, feedback, always, review) => sent.push({ type: 'permissionAnswer', requestId, decision, ...(feedback ? { feedback } : {}), ...(always ? { always } : {}), ...(review ? { review } : {}) }),
        onOpenDiff: () => undefined,
      }),
      root!,
    );
  });
  return { sent, el: root };
}

describe('per-hunk review on the permission card', () => {
  it('R on a focused change leaves it out; Allow as reviewed sends each change’s choice, which the host accepts', () => {
    const { sent, el } = mount();
    const hunks = [...el.querySelectorAll<HTMLElement>('[data-testid="hunk"]')];
    expect(hunks).toHaveLength(2);
    act(() => {
      hunks[1]!.focus();
      hunks[1]!.dispatchEvent(new KeyboardEvent('keydown', { key: 'r', bubbles: true }));
    });
    expect(el.querySelectorAll('[data-testid="hunk"]')[1]!.getAttribute('data-choice')).toBe('reject');
    const allow = el.querySelector<HTMLButtonElement>('[data-testid="permission-allow"]')!;
    expect(allow.textContent).toContain('Allow as reviewed');
    act(() => allow.click());
    expect(sent).toEqual([{ type: 'permissionAnswer', requestId: 'r1', decision: 'allow', review: { choices: [{ kind: 'accept' }, { kind: 'reject' }] } }]);
    expect(parseFromWebview(sent[0]).ok).toBe(true);
  });

  it('Edit puts the proposed lines in a box; what the person types is sent as that change', () => {
    const { sent, el } = mount();
    act(() => el.querySelectorAll<HTMLButtonElement>('[data-testid="hunk-edit-button"]')[0]!.click());
    const box = el.querySelector<HTMLTextAreaElement>('[data-testid="hunk-edit"]')!;
    expect(box.value).toBe('ONE');
    act(() => {
      box.value = 'Uno';
      box.dispatchEvent(new Event('input', { bubbles: true }));
    });
    act(() => el.querySelector<HTMLButtonElement>('[data-testid="permission-allow"]')!.click());
    expect(sent).toEqual([{ type: 'permissionAnswer', requestId: 'r1', decision: 'allow', review: { choices: [{ kind: 'edit', lines: ['Uno'] }, { kind: 'accept' }] } }]);
  });

  it('every change applied is a plain allow', () => {
    const { sent, el } = mount();
    act(() => el.querySelector<HTMLButtonElement>('[data-testid="permission-allow"]')!.click());
    expect(sent).toEqual([{ type: 'permissionAnswer', requestId: 'r1', decision: 'allow' }]);
  });
});
