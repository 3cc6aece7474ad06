/** How formal a greeting should be. */
export type Tone = 'casual' | 'formal';

export interface GreetOptions {
  tone?: Tone;
  /** Hour of the day (0-23) used by the formal tone. Default: the current hour. */
  hour?: number;
}

/** The formal greeting for an hour of the day (0-23). */
export function timeOfDayGreeting(hour: number): string {
  if (hour < 12) return 'Good morning';
  if (hour < 18) return 'Good afternoon';
  return 'Good evening';
}

/** Greets someone by name, e.g. `greet('Ada')` is "Hello, Ada!". */
export function greet(name: string, options: GreetOptions = {}): string {
  const tone = options.tone ?? 'casual';
  if (tone === 'formal') {
    const hour = options.hour ?? new Date().getHours();
    return `${timeOfDayGreeting(hour)}, ${name}.`;
  }
  return `Hello, ${name}!`;
}
