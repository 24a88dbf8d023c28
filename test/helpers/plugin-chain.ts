import { expect } from 'chai';
import { ConfigError } from '../../src/config/load';
import { createApp } from '../../src/app';
import { testConfig } from './gateway';

/** The problems a ConfigError names when an app is built with this plugin chain; fails if the chain is accepted. */
export async function chainProblems(plugins: unknown[]): Promise<Array<{ pointer: string; message: string }>> {
  try {
    await createApp(testConfig({ plugins }));
  } catch (e) {
    expect(e).to.be.instanceOf(ConfigError);
    return (e as ConfigError).problems;
  }
  throw new Error('expected the chain to be refused');
}
