export * from '../../src/testing/mock-upstream';
