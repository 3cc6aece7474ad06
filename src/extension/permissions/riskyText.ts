import type { PermissionRequest } from '../../core/permissions/gate';

/** The modal's message and detail for a risky request: the exact command (or target) and why Keel asks. Pure. */
export function riskyPromptText(request: PermissionRequest): { message: string; detail: string } {
  const s = request.subject;
  const what = s.kind === 'execute' ? s.command : s.kind === 'network' ? s.url : s.summary || request.tool;
  const why = request.rule && !request.reason.includes(request.rule) ? `${request.reason} (rule ${request.rule})` : request.reason;
  return {
    message: `Keel wants to run a risky ${request.tool} call`,
    detail: `${what.length > 2000 ? `${what.slice(0, 2000)}…` : what}\n\nWhy Keel asks: ${why}\n\nThe same request is shown in the Keel chat; the first answer counts.`,
  };
}
