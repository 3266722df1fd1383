// Lint: typescript-eslint's recommended rules, with the type-aware ones that catch real bugs in a
// server made of promises and streams (a promise nobody awaits or catches; a promise where a
// callback's value belongs). Formatting is Prettier's (.prettierrc.json), not the linter's.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '**/fixtures/**', 'eslint.config.js'] },
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // A closure declared before the one assignment it reads (`let stop; const release = () => stop?.(); stop = run(release)`).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // A leading underscore names what is left out on purpose (`const { managedFields: _m, ...rest } = meta`).
      // rxjs from its public entry point: the bundle tree-shakes it, and the deep paths are rxjs's
      // internals (measured within noise of them on cold start: bench/RESULTS.md, rxjs entry points).
      'no-restricted-imports': ['error', { patterns: [{ group: ['rxjs/internal/*'], message: "import from 'rxjs' (its public entry point)" }] }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
  {
    // Tests and benchmarks read wire JSON whose shape is the assertion itself.
    files: ['test/**', 'bench/**', 'examples/**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
