import type { PermissionAsker } from '../permissions/gate';
import type { ReviewedEdit } from '../tools/types';

/**
 * The asker the turn's permission machine uses, keeping aside each edit the person reviewed
 * change by change (by tool call id) so that the tool run after the allow writes exactly what was
 * allowed. The same in the host and in a worker (where the answer comes up from the host). A
 * review is kept only for an allowed Write or Edit whose request carried the proposed diff it was
 * made from.
 */
export function keepingReviews(asker: PermissionAsker, reviews: Map<string, ReviewedEdit>): PermissionAsker {
  return {
    async ask(request, signal) {
      const answer = await asker.ask(request, signal);
      const s = request.subject;
      if (answer.decision === 'allow' && answer.review && s.kind === 'write' && s.diff) {
        reviews.set(request.toolCallId, { review: answer.review, before: s.diff.before, after: s.diff.after, path: s.diff.path });
      }
      return answer;
    },
  };
}
