/** What a scrolled element reports: its `scrollTop`, `scrollHeight` and `clientHeight`. */
export interface ScrollMetrics {
  scrollTop: number;
  scrollHeight: number;
  clientHeight: number;
}

/** Within this many pixels of the end counts as at the end (sub-pixel layouts, zoom). */
export const END_SLACK_PX = 2;

const distanceFromEnd = (m: ScrollMetrics): number => m.scrollHeight - m.clientHeight - m.scrollTop;

/**
 * Whether the person is reading the end of a scrolled transcript, judged by what they did rather
 * than by one reading of the distance from the end, and what to do when sizes change.
 *
 * Why not the distance alone: a scroll event is dispatched a frame after the scroll that caused
 * it, and by then the content may have grown (a streamed chunk, a new card) before anything
 * followed it. Read then, the distance says "not at the end" although nobody moved, and a
 * permission card docking under the transcript a moment later left what it asks about below the
 * fold (seen in the demo e2e under CI's load). So the end is left only when the view moves **up**
 * away from it — which content growth and following it never do: the person scrolled, paged,
 * searched — or when the person starts to (`leaving`: a wheel turned up, Page Up, the
 * scrollbar grabbed), and it is regained whenever the view is at the end again.
 *
 * And why not leave following to the virtualizer: it follows appended items and rows growing at
 * the end by its own reckoning of the viewport's size, which lags a docking card by a frame;
 * the view then stopped one card short of the end for good. Any change of either height (the
 * viewport's or the content's) while the person follows brings the end back into view.
 */
export class EndFollower {
  private atEnd: boolean;
  private lastTop: number;
  private height: number;
  private content: number;

  constructor(m: ScrollMetrics) {
    this.atEnd = distanceFromEnd(m) <= END_SLACK_PX;
    this.lastTop = m.scrollTop;
    this.height = m.clientHeight;
    this.content = m.scrollHeight;
  }

  /** The person is (as far as anything they did says) reading the end. */
  get following(): boolean {
    return this.atEnd;
  }

  /** A scroll event. */
  scrolled(m: ScrollMetrics): void {
    if (distanceFromEnd(m) <= END_SLACK_PX) this.atEnd = true;
    else if (m.scrollTop < this.lastTop - 0.5) this.atEnd = false;
    // Moved down, or not at all, yet short of the end: the content grew under the view before the
    // follow caught up; what the person wants has not changed.
    this.lastTop = m.scrollTop;
  }

  /**
   * The person started to move up (a wheel turned up, Page Up, Home, the scrollbar grabbed):
   * stop following now, before the scroll it causes is reported, so growth in between does not
   * pull the view back down under them. Nothing to leave when everything fits in the view.
   */
  leaving(m: ScrollMetrics): void {
    if (m.scrollHeight - m.clientHeight > END_SLACK_PX) this.atEnd = false;
  }

  /**
   * The viewport's height (a card docked below it or went, the composer grew) or the content's
   * (a streamed chunk, a card measured) changed: true when the view should go to the end,
   * because the person follows it and it is not in view.
   */
  resized(m: ScrollMetrics): boolean {
    if (m.clientHeight === this.height && m.scrollHeight === this.content) return false;
    this.height = m.clientHeight;
    this.content = m.scrollHeight;
    return this.atEnd && distanceFromEnd(m) > END_SLACK_PX;
  }
}
