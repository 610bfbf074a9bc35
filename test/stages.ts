// The folders of the scale stage (`npm run test:scale`, jest.scale.config.ts): test files that start
// their own Redis deployments or pgbouncer, one at a time, outside `npm test` (jest.config.ts) and
// the cluster list (test/structure/redis-topology.test.ts). The timing check among them lives under
// test/timing/ with the others (test/timing/README.md).
export const SCALE_STAGE_DIRS: readonly string[] = ['test/scale/', 'test/timing/scale/'];

export const inScaleStage = (path: string) => SCALE_STAGE_DIRS.some((dir) => path.startsWith(dir));
