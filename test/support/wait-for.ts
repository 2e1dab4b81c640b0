/**
 * Waiting on observed state, in workerd and in Node alike: polls `find` until it returns a
 * value, bounded in time and in the number of polls. The bound only turns a hang into a failure
 * that names what never happened; a passing test never depends on it.
 */
export async function waitFor<T>(what: string, find: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const maxPolls = Math.ceil(timeoutMs / intervalMs) + 1;
  for (let poll = 0; poll < maxPolls; poll++) {
    const found = await find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/**
 * A meeting point for `parties` concurrent callers: each `arrive()` resolves once all have
 * arrived, so work that runs one at a time never gets past it (it fails after `timeoutMs`,
 * naming how many were there). `peak` is the most callers that were waiting at once.
 */
export class Rendezvous {
  private arrived = 0;
  private release!: () => void;
  private readonly allHere = new Promise<void>((resolve) => {
    this.release = resolve;
  });
  peak = 0;

  constructor(
    private readonly parties: number,
    private readonly timeoutMs = 2_000,
  ) {}

  async arrive(): Promise<void> {
    this.arrived += 1;
    this.peak = Math.max(this.peak, this.arrived);
    if (this.arrived === this.parties) this.release();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`only ${this.arrived} of ${this.parties} calls were in flight at once`)), this.timeoutMs);
    });
    try {
      await Promise.race([this.allHere, late]);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }
}
