/**
 * How long after a run's timeout (its budget's `timeout_ms`) the session still counts on the run
 * ending by itself: the runner's own end (abort, synthesis, record) comes first. The alarm looks
 * for a run then, and a resumed stream stops waiting for it then.
 */
export const IN_FLIGHT_GRACE_MS = 5_000;
