/**
 * A wait or a timeout as a person reads it: "0.5 s", "45 s", "12 min", "27 h 47 min".
 * Negative or non-finite input reads as "0 s".
 */
export function formatDuration(ms: number): string {
  const s = Number.isFinite(ms) && ms > 0 ? ms / 1000 : 0;
  if (s < 10) return `${Math.round(s * 10) / 10} s`;
  if (s < 90) return `${Math.round(s)} s`;
  const min = Math.round(s / 60);
  if (min < 90) return `${min} min`;
  const h = Math.floor(min / 60);
  const rest = min % 60;
  return rest === 0 ? `${h} h` : `${h} h ${rest} min`;
}
