// Durations: milliseconds here, Go's duration text ("1.5s", "15m0s") on the wire.

const units: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };
const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;

/** Milliseconds as Go's duration text, the form every duration of the API takes. */
export function goDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) {
    throw new RangeError(`duration ${ms} ms: give a finite number of milliseconds, not negative`);
  }
  return `${Number(ms.toFixed(3))}ms`;
}

/** Go's duration text in milliseconds; undefined for an absent one. */
export function milliseconds(text: string | null | undefined): number | undefined {
  if (!text) return undefined;
  if (text === '0') return 0;
  let total = 0;
  part.lastIndex = 0;
  while (part.lastIndex < text.length) {
    const m = part.exec(text);
    if (!m) throw new Error(`jail: duration ${JSON.stringify(text)} is not Go's duration text`);
    total += Number(m[1]) * units[m[2]];
  }
  return total;
}
