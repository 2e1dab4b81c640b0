/**
 * The one Node built-in the Worker uses (workerd implements it under nodejs_compat). Declared
 * here instead of pulling all of @types/node into the Worker's types.
 */
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    getStore(): T | undefined;
    run<R>(store: T, callback: () => R): R;
  }
}
