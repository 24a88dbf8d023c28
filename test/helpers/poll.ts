import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `check` every `everyMs` until it holds or `ms` have passed; whether it held. */
export async function within(ms: number, check: () => boolean | Promise<boolean>, everyMs = 25): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= until) return false;
    await sleep(everyMs);
  }
}
