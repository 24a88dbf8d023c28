import { join } from 'node:path';

/** Where the console's browser tests write their screenshots (look at them after a run). */
export const SHOTS = join(process.cwd(), '.tmp', 'screenshots');

/** The widths the console is photographed at: a phone's and a desktop's. */
export const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1440, height: 900 } } as const;
