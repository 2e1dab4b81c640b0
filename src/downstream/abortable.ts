/**
 * Settle with `onAbort()` as soon as the signal fires, without cancelling `promise` itself:
 * used where one in-flight connect or listing is shared by several callers and one caller's
 * cancellation must not fail the others.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined, onAbort: () => unknown): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    // Nobody will await `promise` now; keep its later rejection from going unhandled.
    promise.catch(() => undefined);
    return Promise.reject(onAbort());
  }
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(onAbort());
    signal.addEventListener("abort", abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}
