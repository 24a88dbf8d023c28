/** A terminal plugin that leaves no result: credit's step then settles a `no_result` record (middleware.test.ts). */
import { definePlugin } from '../../../src/plugin';

export default definePlugin({
  name: 'no-answer',
  terminal: true,
  configSchema: { type: 'object', additionalProperties: false },
  setup() {
    return { middleware: async () => {} };
  },
});
