/**
 * Test seam: the objects on an expert call's path (ExpertSession, SkillLimiter) take their D1
 * binding through `objectEnv`, so a workerd test can watch every D1 statement they run and prove
 * none runs between a call's start and its answer (test/experts/limits/no-d1-on-call-path.test.ts).
 * Only code can set the watcher, and it applies only when ENVIRONMENT is "test"; elsewhere the
 * env is passed through untouched.
 */
export type D1Watcher = (what: "prepare" | "exec" | "batch", sql: string) => void;

let watcher: D1Watcher | undefined;

export function watchD1ForTests(watch: D1Watcher | undefined): void {
  watcher = watch;
}

export function objectEnv(env: Env): Env {
  if (env.ENVIRONMENT !== "test") return env;
  const db = env.DB;
  const watched: D1Database = new Proxy(db, {
    get(target, property) {
      if (property === "prepare")
        return (sql: string) => {
          watcher?.("prepare", sql);
          return target.prepare(sql);
        };
      if (property === "exec")
        return (sql: string) => {
          watcher?.("exec", sql);
          return target.exec(sql);
        };
      if (property === "batch")
        return (statements: D1PreparedStatement[]) => {
          watcher?.("batch", `${statements.length} statements`);
          return target.batch(statements);
        };
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { ...env, DB: watched };
}
