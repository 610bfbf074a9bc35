import { readFileSync } from 'node:fs';
import path from 'node:path';
import { youngGenerationFlag, type NodeApp } from '@mailrail/platform/process/memory-flags';

// The young-generation cap is a process flag, so every way of starting a process spells it:
// these must all agree with memory-flags.ts (docs/worker.md, "Memory").
const read = (file: string) => readFileSync(path.resolve(__dirname, '../..', file), 'utf8');
const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
const compose = read('docker-compose.yml');
const apps: NodeApp[] = ['api', 'worker', 'smtp'];

it.each(apps)('%s: npm start and dev scripts pass its flag', (app) => {
  expect(scripts[`start:${app}`]).toBe(`node ${youngGenerationFlag(app)} dist/${app}/main.js`);
  expect(scripts[`dev:${app}`]).toBe(`node ${youngGenerationFlag(app)} --import tsx apps/${app}/src/main.ts`);
});

it.each(apps)('%s: docker-compose.yml starts it with its flag', (app) => {
  expect(compose).toContain(`command: ["node", "${youngGenerationFlag(app)}", "dist/${app}/main.js"]`);
});

it("the Dockerfile's default command is the API with its flag", () => {
  expect(read('Dockerfile')).toContain(`CMD ["node", "${youngGenerationFlag('api')}", "dist/api/main.js"]`);
});
