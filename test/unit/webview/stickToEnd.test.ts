import { describe, expect, it } from 'vitest';
import { EndFollower, type ScrollMetrics } from '../../../webview/stickToEnd';

/** A transcript 300 px high over `content` px of chat, scrolled to `top`. */
const at = (top: number, content: number, height = 300): ScrollMetrics => ({ scrollTop: top, scrollHeight: content, clientHeight: height });

describe('keeping the end of the transcript in view (EndFollower)', () => {
  it('a card docking under the transcript keeps the end in view while the person reads it', () => {
    const f = new EndFollower(at(700, 1000));
    expect(f.resized(at(700, 1000, 100))).toBe(true);
  });

  it('a scroll event read after the content grew, before the follow caught up, does not lose the end', () => {
    // What the demo e2e caught under load: the virtualizer's last follow (to 700) is reported a
    // frame later, when a streamed chunk and a new card have already made the content 1400 high.
    const f = new EndFollower(at(500, 800));
    f.scrolled(at(700, 1400));
    expect(f.following).toBe(true);
    // The permission card docks: the view goes to the end.
    expect(f.resized(at(700, 1400, 90))).toBe(true);
  });

  it('scrolling up to read earlier messages leaves the end: a docking card does not pull the view down', () => {
    const f = new EndFollower(at(700, 1000));
    f.scrolled(at(400, 1000));
    expect(f.following).toBe(false);
    expect(f.resized(at(400, 1000, 100))).toBe(false);
    // Growth below and scrolling down short of the end change nothing.
    f.scrolled(at(500, 1600));
    expect(f.following).toBe(false);
  });

  it('scrolling back to the end follows again', () => {
    const f = new EndFollower(at(100, 1000));
    expect(f.following).toBe(false);
    f.scrolled(at(699, 1000));
    expect(f.following).toBe(true);
    expect(f.resized(at(699, 1000, 250))).toBe(true);
  });

  it('the view clamped up when a dock goes away is still the end', () => {
    const f = new EndFollower(at(900, 1000, 100));
    f.scrolled(at(700, 1000, 300));
    expect(f.following).toBe(true);
  });

  it('only a change of a height counts as a resize, and nothing is done when the end is in view', () => {
    const f = new EndFollower(at(700, 1000));
    expect(f.resized(at(700, 1000))).toBe(false);
    expect(f.resized(at(700, 1000, 299))).toBe(false);
  });

  it('content growing while the person follows brings the end back (a card measured taller than guessed)', () => {
    const f = new EndFollower(at(700, 1000));
    expect(f.resized(at(700, 1080))).toBe(true);
    // Not while they read earlier messages.
    f.scrolled(at(300, 1080));
    expect(f.resized(at(300, 1300))).toBe(false);
  });

  it('a wheel turned up stops following at once, before its scroll is reported', () => {
    const f = new EndFollower(at(700, 1000));
    f.leaving(at(700, 1000));
    expect(f.following).toBe(false);
    // A chunk streamed in before the scroll event: the view is not pulled back down.
    expect(f.resized(at(700, 1050))).toBe(false);
    f.scrolled(at(640, 1050));
    expect(f.following).toBe(false);
  });

  it('with everything in view there is nothing to leave: growth is followed', () => {
    const f = new EndFollower(at(0, 200));
    f.leaving(at(0, 200));
    expect(f.following).toBe(true);
    expect(f.resized(at(0, 450))).toBe(true);
  });
});
