// `npm run lint`: correctness, regex safety and import layering. Formatting is prettier's
// (`npm run format:check`); import cycles are madge's (`npm run lint:cycles`).
import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';

// eslint-plugin-regexp's recommended set without its stylistic rules (prefer-w, prefer-d,
// sort-flags, ...) and two best-practice rules that are about clarity, not behaviour.
const CLARITY_ONLY = new Set(['regexp/use-ignore-case', 'regexp/no-unused-capturing-group']);
const regexpRecommended = Object.fromEntries(
  Object.entries(regexp.configs['flat/recommended'].rules).filter(([name]) => {
    if (CLARITY_ONLY.has(name)) return false;
    const rule = name.startsWith('regexp/') ? regexp.rules[name.slice('regexp/'.length)] : undefined;
    return rule?.meta.docs.category !== 'Stylistic Issues';
  }),
);

// Layering: a package may import only the packages below it. Apps never import each other, and
// test support (`@mailrail/testing`) is for tests only. See "Layout" in the README.
const forbid = (names, why) => names.map((n) => ({ group: [`@mailrail/${n}`, `@mailrail/${n}/*`], message: why }));
// Relative paths may not leave their own package or app: cross them by package name.
const noEscape = {
  regex: '^(\\.\\./){3,}',
  message: 'Import another package or app by its @mailrail/... name, not a relative path out of this one.',
};
const layer = (files, names, why) => ({
  files,
  ignores: ['**/*.test.ts', '**/*.test.tsx'],
  rules: { 'no-restricted-imports': ['error', { patterns: [...forbid(names, why), noEscape] }] },
});
const testFilesLayer = (files, names, why) => ({
  files: files.map((f) => f.replace(/\*\*\/\*\.ts$/, '**/*.test.ts')),
  rules: { 'no-restricted-imports': ['error', { patterns: [...forbid(names, why), noEscape] }] },
});
const rules = [
  [
    ['packages/platform/**/*.ts'],
    ['domain', 'testing', 'tools', 'api', 'worker', 'smtp', 'web'],
    'platform is the bottom layer: it imports no other @mailrail package.',
  ],
  [['packages/domain/**/*.ts'], ['testing', 'tools', 'api', 'worker', 'smtp', 'web'], 'domain imports platform only.'],
  [['packages/testing/**/*.ts'], ['api', 'worker', 'smtp', 'web'], 'testing imports platform, domain and tools (migrations) only.'],
  [['packages/tools/**/*.ts'], ['testing', 'api', 'worker', 'smtp', 'web'], 'tools import platform and domain only.'],
  [
    ['apps/api/**/*.ts'],
    ['testing', 'tools', 'worker', 'smtp', 'web'],
    'apps import platform and domain; tests may import testing; apps never import each other.',
  ],
  [
    ['apps/worker/**/*.ts'],
    ['testing', 'tools', 'api', 'smtp', 'web'],
    'apps import platform and domain; tests may import testing; apps never import each other.',
  ],
  [
    ['apps/smtp/**/*.ts'],
    ['testing', 'tools', 'api', 'worker', 'web'],
    'apps import platform and domain; tests may import testing; apps never import each other.',
  ],
  // The dashboard is a client: it may reuse the shared vocabularies (enums, event names), nothing else.
  [
    ['apps/web/**/*.ts', 'apps/web/**/*.tsx'],
    ['testing', 'tools', 'api', 'worker', 'smtp'],
    'the web app is a client: it imports shared definitions from domain and platform only; apps never import each other.',
  ],
];
// Test files may use test support (and, in the bottom layers, nothing else above them).
const allow = (names, extra) => names.filter((n) => !extra.includes(n));
const layering = rules.flatMap(([files, names, why]) => [
  layer(files, names, why),
  // Tests may also drive the tooling (migrations); an app's test support (`src/testing/`) is a test too.
  testFilesLayer(files, allow(names, ['testing', 'tools']), why),
  {
    ...layer(
      files.map((f) => f.replace(/\*\*\/\*\.ts$/, '**/testing/**/*.ts')),
      allow(names, ['testing', 'tools']),
      why,
    ),
    ignores: [],
  },
]);

export default [
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'apps/web/.dist-*/**',
      '.cache/**',
      'packages/platform/src/db/generated/**',
      'apps/web/src/api/generated/**',
    ],
  },
  ...tseslint.configs.recommended.map((c) => ({ ...c, files: ['**/*.ts', '**/*.tsx'] })),
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parser: tseslint.parser, ecmaVersion: 2023, sourceType: 'module' },
    plugins: { regexp },
    rules: {
      ...regexpRecommended,
      // Request data reaches most regexes: polynomial backtracking is an error too, not only the
      // exponential kind, and so is a quantifier that makes the search itself quadratic.
      'regexp/no-super-linear-backtracking': ['error', { report: 'potential' }],
      'regexp/no-super-linear-move': 'error',
      'regexp/no-misleading-capturing-group': 'error',
      // A leading underscore marks a value left out on purpose (`{ secret: _s, ...rest }`, express's
      // four-argument error handler).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
  ...layering,
];
