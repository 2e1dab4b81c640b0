// @ts-check
import { randomBytes } from "node:crypto";
import { chmod, open, realpath, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Replaces the file at `link` with `text` in one step: a temporary file in the same directory, flushed, then
 * renamed over it. `wrangler dev` watches wrangler.toml and rebuilds from whatever it reads; a
 * file truncated by an in-place write reads as a config without `main`, and wrangler dev exits
 * ("Missing entry-point to Worker script"). rename(2) within one directory is atomic: a reader
 * sees the old file or the new one, never a half-written one. The file keeps its mode; a
 * symlinked config is replaced where it points, and stays a symlink.
 * @param {string} link
 * @param {string} text
 */
export async function replaceFileAtomically(link, text) {
  const path = await realpath(link);
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  const { mode } = await stat(path);
  const handle = await open(temp, "wx", mode & 0o777);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    // open() applies the umask; the original's mode is what the user chose.
    await chmod(temp, mode & 0o777);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
