/** @jest-config-loader ts-node */
/** @jest-config-loader-options {"transpileOnly": true} */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Config } from 'jest';
import { CLUSTER_TESTS } from './test/redis-topology';
import { SCALE_STAGE_DIRS } from './test/stages';

// npm run test:cluster: only the files whose behaviour depends on Redis topology (test/redis-topology.ts).
const onCluster = process.env.MAILRAIL_TEST_REDIS === 'cluster';

// A hung test file fails fast (test/hang-watchdog.js): jest's workers, which inherit this
// environment, write a diagnostic report (their JavaScript stack) when the watchdog asks with SIGUSR2.
const hangReports = path.join(__dirname, '.cache/hang-reports');
mkdirSync(hangReports, { recursive: true });
process.env.NODE_OPTIONS =
  `${process.env.NODE_OPTIONS ?? ''} --report-on-signal --report-signal=SIGUSR2 --report-directory=${hangReports}`.trim();

// Tests talk to the real PostgreSQL and Redis: each file gets its own database (cloned from a
// migrated template) and its own Redis prefix, so files run in parallel.
const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/apps', '<rootDir>/packages', '<rootDir>/test'],
  testMatch: onCluster ? CLUSTER_TESTS.map((file) => `<rootDir>/${file}`) : ['**/*.test.ts'],
  // The scale tests start their own Redis Cluster and Sentinel: npm run test:scale (jest.scale.config.ts).
  testPathIgnorePatterns: ['/node_modules/', ...SCALE_STAGE_DIRS.map((dir) => `<rootDir>/${dir}`)],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  moduleNameMapper: {
    '^@mailrail/(platform|domain|testing|tools)/(.*)$': '<rootDir>/packages/$1/src/$2',
  },
  // MAILRAIL_TEST_REDIS=cluster: the setup starts a local Redis Cluster for the run (docs/redis.md).
  globalSetup: '<rootDir>/packages/testing/src/global-setup.ts',
  globalTeardown: '<rootDir>/packages/testing/src/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
  // A file without progress for TEST_HANG_SECONDS (180) fails with its workers' stacks.
  reporters: ['default', '<rootDir>/test/hang-watchdog.js'],
  forceExit: false,
};

export default config;
