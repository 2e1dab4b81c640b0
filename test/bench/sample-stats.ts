/** Nearest-rank percentile of samples in ms (p in 0..100). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export const median = (samples: readonly number[]): number => percentile(samples, 50);

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
}

export function summarize(samples: readonly number[]): Summary {
  const mean = samples.reduce((sum, x) => sum + x, 0) / Math.max(1, samples.length);
  return { n: samples.length, p50: percentile(samples, 50), p99: percentile(samples, 99), mean };
}

export const round = (x: number, digits = 2): number => (Number.isFinite(x) ? Number(x.toFixed(digits)) : x);

/** A difference rounded, with its sign: `+0.42`, `-0.1`. */
export const signed = (x: number): string => `${x < 0 ? "" : "+"}${round(x)}`;

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/**
 * Runs A and B in interleaved pairs (alternating which goes first) after `warmup` unrecorded
 * pairs, so that drift on a shared machine hits both arms alike. Bounded by count and time.
 */
export async function interleavedPairs(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
  { samples, warmup, maxMs }: { samples: number; warmup: number; maxMs: number },
): Promise<{ a: number[]; b: number[] }> {
  for (let i = 0; i < warmup; i++) {
    await a();
    await b();
  }
  const result = { a: [] as number[], b: [] as number[] };
  const deadline = performance.now() + maxMs;
  for (let i = 0; i < samples && performance.now() < deadline; i++) {
    if (i % 2 === 0) {
      result.a.push(await timed(a));
      result.b.push(await timed(b));
    } else {
      result.b.push(await timed(b));
      result.a.push(await timed(a));
    }
  }
  return result;
}

/** Every order of `n` arms (n! of them), so that cycling through them puts each arm before each other equally often. */
function orders(n: number): number[][] {
  if (n <= 1) return [[0]];
  return orders(n - 1).flatMap((order) => Array.from({ length: n }, (_, at) => [...order.slice(0, at), n - 1, ...order.slice(at)]));
}

/**
 * interleavedPairs for more than two arms: one sample of every arm per round, the rounds cycling
 * through every order of the arms so that each arm precedes each other as often as it follows
 * it, and a shared machine's drift hits all alike. Returns the samples of each arm, in `arms`' order.
 */
export async function interleavedArms(
  arms: ReadonlyArray<() => Promise<unknown>>,
  { samples, warmup, maxMs }: { samples: number; warmup: number; maxMs: number },
): Promise<number[][]> {
  for (let i = 0; i < warmup; i++) for (const arm of arms) await arm();
  const result = arms.map(() => [] as number[]);
  const cycle = orders(arms.length);
  const deadline = performance.now() + maxMs;
  for (let i = 0; i < samples && performance.now() < deadline; i++) {
    for (const at of cycle[i % cycle.length] ?? []) {
      const arm = arms[at];
      if (arm) result[at]?.push(await timed(arm));
    }
  }
  return result;
}

/** Times `run` `samples` times after `warmup` unrecorded runs, bounded in time. */
export async function sampleTimes(
  run: () => Promise<unknown>,
  { samples, warmup, maxMs }: { samples: number; warmup: number; maxMs: number },
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await run();
  const times: number[] = [];
  const deadline = performance.now() + maxMs;
  for (let i = 0; i < samples && performance.now() < deadline; i++) times.push(await timed(run));
  return times;
}
