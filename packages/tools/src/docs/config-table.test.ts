import { readFileSync } from 'node:fs';
import path from 'node:path';
import { configTableMarkdown } from './config-table';

it('the README configuration table is the one generated from the config schema', () => {
  const readme = readFileSync(path.resolve(__dirname, '../../../../README.md'), 'utf8');
  const m = /<!-- config-table:start -->\n([\s\S]*?)\n<!-- config-table:end -->/.exec(readme);
  expect(m?.[1]).toBe(configTableMarkdown());
});
