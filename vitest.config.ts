// Test configuration: unit tests beside the code, integration tests under test/.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'abi/**/*.test.ts',
      'host/**/*.test.ts',
      'capabilities/**/*.test.ts',
      'cli/**/*.test.ts',
      'conformance/**/*.test.ts',
      'sdk-guest/**/test/**/*.test.ts',
      'plugins/*/test/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', 'dist/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
