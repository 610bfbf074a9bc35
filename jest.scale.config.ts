/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
import type { Config } from 'jest';
import base from './jest.config';
import { SCALE_STAGE_DIRS } from './test/stages';

// npm run test:scale: the tests that start their own Redis deployments (test/scale, docs/redis.md).
// One file at a time: each starts six or five redis-server processes.
const config: Config = {
  ...base,
  roots: SCALE_STAGE_DIRS.map((dir) => `<rootDir>/${dir}`),
  testPathIgnorePatterns: ['/node_modules/'],
  maxWorkers: 1,
  testTimeout: 120_000,
  // Clients of a node a failover test killed retry forever; the servers are stopped by the tests.
  forceExit: true,
};

export default config;
