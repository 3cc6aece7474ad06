import { reviewForModel } from '../../shared/domain/review';
import { readTextIfExists } from './fileText';
import type { ReviewedEdit, ToolContext, ToolResult } from './types';
import { writeNoFollow } from './writeTarget';

/**
 * An Edit or Write the person reviewed change by change (ToolContext.reviewed): writes exactly
 * what they allowed — the file as it was proposed against, with each change applied, left out or
 * replaced by their lines — and tells the model which. Refuses when the file changed after the
 * review (the review was of the file as it was), so nothing the person did not see is overwritten.
 */
export async function writeReviewed(target: string, shown: string, reviewed: ReviewedEdit, ctx: ToolContext): Promise<ToolResult> {
  const now = await readTextIfExists(target);
  if (now !== reviewed.before) {
    return {
      content: `Not written: ${shown} changed after the user reviewed your change (the review was of the file as it was then). Read it again and propose the change anew.`,
      isError: true,
      summary: `Did not write ${shown}`,
    };
  }
  const r = reviewed.review;
  const told = reviewForModel(shown, reviewed.before, reviewed.after, r);
  if (r.accepted.length === 0 && r.edited.length === 0) {
    return { content: `${told}\nNothing was written: the user left out every change.`, isError: true, summary: `No change to ${shown}: every change left out` };
  }
  await ctx.checkpoints?.beforeWrite(target, r.content);
  await writeNoFollow(target, r.content);
  const applied = r.accepted.length + r.edited.length;
  const verb = reviewed.before === null ? 'Created' : 'Edited';
  const yours = r.edited.length ? ', some as you changed them' : '';
  return { content: told, isError: false, summary: `${verb} ${shown}: ${applied} of ${r.hunks} change${r.hunks === 1 ? '' : 's'} applied${yours}` };
}
