/**
 * An execution context with other `props`. Used where identity crosses a layer: the auth
 * guard hands the API handler only the validated user. The platform's ctx may carry more (the
 * OAuth library's `ctx.auth` holds the raw token), so nothing is copied that is not listed here.
 */
export function contextWithProps<P>(ctx: ExecutionContext, props: P): ExecutionContext<P> {
  return {
    props,
    waitUntil: (promise) => ctx.waitUntil(promise),
    passThroughOnException: () => ctx.passThroughOnException(),
    abort: (reason) => ctx.abort(reason),
    get exports() {
      return ctx.exports;
    },
    get cache() {
      return ctx.cache;
    },
    get access() {
      return ctx.access;
    },
    get tracing() {
      return ctx.tracing;
    },
  };
}
