import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Young generation bigger than this (bytes) at idle is worth giving back. */
const SHRINK_ABOVE = 4 * 1024 * 1024;
const PERIOD_MS = 5000;
/**
 * How long the gateway must have been idle before its memory is given back. A GC here costs the requests that come
 * after it: the heap it shrank grows again under them (the full chain's c=1 p99 in its first seconds after 30 s idle
 * was ~2.9 ms with a GC at 5 s of idle, 1.0-2.5 without; README "Speed"). Traffic that pauses for less keeps it.
 */
const IDLE_BEFORE_GC_MS = 60_000;
const TRIES_PER_IDLE_SPELL = 3;

let gc: (() => void) | undefined;
let users = 0;
let timer: NodeJS.Timeout | undefined;
let seen = -1;
let tries = 0;
/** Periods without a request, in a row. */
let idlePeriods = 0;

/** Requests started in this process; the app counts them (one increment per request). */
export const activity = { requests: 0 };

function youngBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.physical_space_size ?? 0;
}

function tick(): void {
  if (activity.requests !== seen) {
    seen = activity.requests;
    tries = 0;
    idlePeriods = 0;
    return;
  }
  if (++idlePeriods * PERIOD_MS < IDLE_BEFORE_GC_MS) return;
  // The first compacts the old generation (V8 may have shrunk the young one itself by now); more only while it is big.
  if (tries >= TRIES_PER_IDLE_SPELL || (tries > 0 && youngBytes() <= SHRINK_ABOVE)) return;
  tries++;
  compactingGc();
}

/**
 * A full GC that also compacts the old generation. A plain full GC frees objects but keeps
 * every page that still holds one live object; after startup (module loading, schema
 * compilation, migrations) that leaves the old generation ~40% empty. Compaction moves the
 * survivors together so the emptied pages go back to the system. V8 reads this flag at each
 * GC, so it is on for this one GC only; at idle the extra few ms cost nothing.
 */
function compactingGc(): void {
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    gc?.();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
}

/**
 * Give the young generation back when the gateway is idle. V8 grows its semi-spaces to
 * 16 MB each during startup and under load, and shrinks them only in a GC that sees a low
 * allocation rate; at idle no GC runs, so the gateway would sit on ~15 MB it does not use.
 * When a minute passed without a request, run a full GC that also compacts, and again while
 * the young generation is still large (a few ms each, only at idle; at most a few per idle spell). Process-wide:
 * every app that starts it shares one unref'd timer; stop() releases it.
 */
export function startIdleGc(): { stop(): void } {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  if (users++ === 0) {
    timer = setInterval(tick, PERIOD_MS);
    timer.unref();
  }
  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      if (--users === 0) clearInterval(timer);
    },
  };
}
