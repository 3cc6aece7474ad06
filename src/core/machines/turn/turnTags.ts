import { isTurnStateTag, type TurnStateTag } from '../../../shared/domain/stateTags';
import { tagsOfState } from '../stateTags';
import { turnMachine } from './turn.machine';

/**
 * What a turn state means, for code that knows it only by its name: its tags in the turn
 * machine's definition, ancestors' included (src/shared/domain/stateTags.ts). Unknown: none.
 */
export function turnStateTags(state: string): TurnStateTag[] {
  return tagsOfState(turnMachine, state).filter(isTurnStateTag);
}

/** Whether a `turn` event's state has `tag`: the event's own tags, else (an older log) the definition's. */
export function turnEventHasTag(e: { state: string; tags?: readonly TurnStateTag[] }, tag: TurnStateTag): boolean {
  return (e.tags ?? turnStateTags(e.state)).includes(tag);
}
