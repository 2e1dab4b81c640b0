// The local D1 database's migrations for `npm start`: applied by wrangler when some are
// pending, skipped when the local database already has every one (wrangler takes 2-4 s to
// find that out by itself on every start).
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";

// Where `wrangler d1 … --local` and `wrangler dev --local` keep D1 (miniflare's default persistence).
const D1_STATE = join(".wrangler", "state", "v3", "d1", "miniflare-D1DatabaseObject");

/**
 * Whether every migrations/*.sql is recorded in the local database's `d1_migrations` table, the
 * table wrangler itself reads to decide what to apply. Anything unexpected (no database yet,
 * two databases, no table) answers false, and wrangler decides.
 * @param {string} root the project directory
 */
export function migrationsUpToDate(root) {
  try {
    const files = readdirSync(join(root, "migrations")).filter((name) => name.endsWith(".sql"));
    const dir = join(root, D1_STATE);
    if (!existsSync(dir)) return false;
    const databases = readdirSync(dir).filter((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite");
    if (databases.length !== 1 || !databases[0]) return false;
    const db = new DatabaseSync(join(dir, databases[0]), { readOnly: true });
    try {
      const applied = new Set(
        db
          .prepare("SELECT name FROM d1_migrations")
          .all()
          .map((row) => row.name),
      );
      return files.every((file) => applied.has(file));
    } finally {
      db.close();
    }
  } catch {
    return false;
  }
}

/**
 * `wrangler d1 migrations apply DB --local`, its output into `log` (it prints a table per
 * migration: the user needs only "database ready", or the output when it fails).
 * @param {{ root: string, wrangler: string, env: NodeJS.ProcessEnv, log: (text: string) => void }} options
 * @returns {Promise<{ code: number | null, output: string }>}
 */
export function applyMigrations({ root, wrangler, env, log }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [wrangler, "d1", "migrations", "apply", "DB", "--local"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const collect = (chunk) => {
      output += chunk;
      log(chunk.toString());
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    child.once("error", (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.once("close", (code) => resolve({ code, output }));
  });
}
