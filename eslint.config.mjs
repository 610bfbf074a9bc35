// Lint for correctness and safety only (issue 15): every regex in the code is checked for
// super-linear backtracking and the other mistakes eslint-plugin-regexp's recommended set catches.
// Style rules (typescript-eslint's own sets, formatting, the plugin's "Stylistic Issues") belong to
// a later issue: do not add them here.
import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';

// The plugin's recommended set without its stylistic rules (prefer-w, prefer-d, sort-flags, ...)
// and two best-practice rules that are about clarity, not behaviour: rewriting the flagged
// regexes for them would be churn in files other work touches.
const CLARITY_ONLY = new Set(['regexp/use-ignore-case', 'regexp/no-unused-capturing-group']);
const recommended = Object.fromEntries(
  Object.entries(regexp.configs['flat/recommended'].rules).filter(([name]) => {
    if (CLARITY_ONLY.has(name)) return false;
    const rule = name.startsWith('regexp/') ? regexp.rules[name.slice('regexp/'.length)] : undefined;
    return rule?.meta.docs.category !== 'Stylistic Issues';
  }),
);

export default [
  { ignores: ['**/node_modules/**', '**/dist/**', 'apps/web/.dist-*/**', '.cache/**', 'packages/core/src/db/generated/**'] },
  {
    files: ['apps/**/*.ts', 'apps/**/*.tsx', 'packages/**/*.ts', 'scripts/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    languageOptions: { parser: tseslint.parser, ecmaVersion: 2023, sourceType: 'module' },
    // typescript-eslint's plugin is registered (no rules on) so existing disable comments naming
    // its rules resolve; the later style issue turns its rules on.
    plugins: { regexp, '@typescript-eslint': tseslint.plugin },
    // Those comments are not unused: their rules are simply not on yet.
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: {
      ...recommended,
      // Request data reaches most regexes: polynomial backtracking is an error too, not only the
      // exponential kind, and so is a quantifier that makes the search itself quadratic.
      'regexp/no-super-linear-backtracking': ['error', { report: 'potential' }],
      'regexp/no-super-linear-move': 'error',
      'regexp/no-misleading-capturing-group': 'error',
    },
  },
];
