// Ends `wrangler dev`'s process group when `npm start` ends, however it ends. npm start runs
// wrangler in a group of its own (so Ctrl-C reaches wrangler only through npm start, which
// stops it in order); a SIGKILL to npm start, or a closed terminal that signals only the
// foreground group, would leave wrangler, its two workerd processes and esbuild serving the
// port. This process holds the read end of a pipe npm start writes nothing to: end-of-file
// means npm start is gone, and no signal can stop the kernel from closing that pipe.
//
// Usage (from scripts/start.mjs): node start-watchdog.mjs <pgid>, stdin a pipe from npm start.

const pgid = Number(process.argv[2]);
if (!Number.isInteger(pgid) || pgid <= 1) process.exit(2);

// Ctrl-C and a hang-up reach this process with npm start's own group: npm start handles
// those; the watchdog must outlive it to act on what it leaves behind.
process.on("SIGINT", () => {});
process.on("SIGHUP", () => {});

process.stdin.on("data", () => {});
process.stdin.once("end", endGroup);
process.stdin.once("error", endGroup);
process.stdin.resume();

let ending = false;
async function endGroup() {
  if (ending) return;
  ending = true;
  signal("SIGTERM");
  // wrangler ends its workerd processes on SIGTERM within about a second; then the rest.
  const deadline = Date.now() + 5_000;
  while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  if (alive()) signal("SIGKILL");
  process.exit(0);
}

/** @param {NodeJS.Signals} name */
function signal(name) {
  try {
    process.kill(-pgid, name);
  } catch {}
}

function alive() {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
