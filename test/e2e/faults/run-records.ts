import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { z } from "zod";
import { waitFor } from "../../support/wait-for";

/**
 * Reads the ExpertSession run records straight from `wrangler dev --local`'s persistence
 * directory: each Durable Object's SQLite file under `<persist>/v3/do/`. Unlike the admin runs
 * API, this sees what is actually on disk, which is what "nothing lost" is about. SQLite's file
 * locks make a concurrent read from Node safe.
 */
export const storedRunSchema = z.object({
  id: z.string(),
  skill: z.string(),
  expert: z.string(),
  user_id: z.string(),
  thread_id: z.string().nullable(),
  outcome: z.string(),
  error: z.string().nullable(),
  usage: z.string().nullable(),
  started_at: z.number(),
  ended_at: z.number().nullable(),
});
export type StoredRunRow = z.infer<typeof storedRunSchema> & { file: string };

const stepRowSchema = z.object({ run_id: z.string(), step: z.number(), tool_calls: z.string(), text: z.string() });
export type StoredStepRow = z.infer<typeof stepRowSchema>;

export const toolCallRecordSchema = z.object({ name: z.string(), status: z.string(), error: z.string().optional() }).loose();

async function sqliteFiles(dir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch {
    return [];
  }
  return entries.filter((entry) => entry.isFile() && entry.name.endsWith(".sqlite")).map((entry) => join(entry.parentPath, entry.name));
}

function withDatabase<T>(file: string, read: (db: DatabaseSync) => T): T | undefined {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const hasRuns = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'").all().length > 0;
    return hasRuns ? read(db) : undefined;
  } finally {
    db.close();
  }
}

/** Every run of every ExpertSession in the persistence directory (of one skill, if given: files sharing a server). */
export async function readRuns(persistDir: string, skill?: string): Promise<StoredRunRow[]> {
  const rows: StoredRunRow[] = [];
  for (const file of await sqliteFiles(join(persistDir, "v3", "do"))) {
    const found = withDatabase(file, (db) =>
      db
        .prepare("SELECT * FROM runs")
        .all()
        .map((row) => ({ ...storedRunSchema.parse(row), file })),
    );
    rows.push(...(found ?? []));
  }
  return skill === undefined ? rows : rows.filter((run) => run.skill === skill);
}

/** The steps of one run, oldest first, with their tool calls parsed. */
export async function readSteps(run: StoredRunRow): Promise<Array<StoredStepRow & { calls: Array<z.infer<typeof toolCallRecordSchema>> }>> {
  const steps =
    withDatabase(run.file, (db) =>
      db
        .prepare("SELECT * FROM run_steps WHERE run_id = ? ORDER BY step")
        .all(run.id)
        .map((row) => stepRowSchema.parse(row)),
    ) ?? [];
  return steps.map((step) => ({ ...step, calls: z.array(toolCallRecordSchema).parse(JSON.parse(step.tool_calls)) }));
}

/** The one run that appears after `before` was taken (a snapshot of run ids), once it has ended. */
export async function waitForNewRun(persistDir: string, before: ReadonlySet<string>, timeoutMs = 15_000, skill?: string): Promise<StoredRunRow> {
  return waitFor(
    "the new run's record to end",
    async () => {
      const fresh = (await readRuns(persistDir, skill)).filter((run) => !before.has(run.id));
      if (fresh.length > 1) throw new Error(`expected one new run, found ${fresh.length}`);
      return fresh[0] !== undefined && fresh[0].outcome !== "running" ? fresh[0] : undefined;
    },
    timeoutMs,
    // Each poll opens every session's SQLite file: poll less often than the default.
    200,
  );
}

export async function runIds(persistDir: string, skill?: string): Promise<Set<string>> {
  return new Set((await readRuns(persistDir, skill)).map((run) => run.id));
}
