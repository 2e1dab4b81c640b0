// The Node-side type check cannot load worker-configuration.d.ts (its runtime globals clash with
// @types/node). Pure modules that unit tests import mention `Env` only as a bag of bindings
// passed through, so an opaque one is enough here.
interface Env {
  readonly [binding: string]: unknown;
}
