// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist-tools/**',
      'node_modules/**',
      'coverage/**',
      // Hardhat's own config file, read by the local chain of the ERC20 tests (CommonJS, outside the TS project).
      'test/support/hardhat/**',
      // Compiled only against the client generated from openapi.json at test time (src/openapi-client.spec.ts).
      'test/client-example/**',
      'bench-results/**',
      'eslint.config.mjs',
      'jest.config.js',
      // dependency-cruiser's configuration and the layer table's reader it requires (CommonJS, outside the TS project).
      '.dependency-cruiser.cjs',
      'tools/lint/*.cjs',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  prettier,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/require-await': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      eqeqeq: 'error',
      curly: 'error',
      'no-console': 'error',
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['../*', './*'], message: 'Import from src/... instead.' }] },
      ],
    },
  },
  {
    // What runs for every request relayed (completions, messages, responses, embeddings) and its billing.
    files: [
      'src/edge-hooks.ts',
      'src/direct-routes.ts',
      'src/common/{errors,http,redis}/**/*.ts',
      'src/modules/{billing,chat-completions,embeddings,messages,rate-limits,relay,responses,text-completions}/**/*.ts',
      'src/modules/ledger/balance-gate*.ts',
    ],
    ignores: ['**/*.spec.ts', '**/dto/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          // A literal that starts with a spread is a copy of it, and V8 11.3 adds to such a copy slowly.
          selector: 'ObjectExpression > SpreadElement:first-child ~ *',
          message:
            'On Node 20 each property or spread after a leading spread costs about a microsecond: use withFields (src/common/with-fields.ts).',
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'src/**/*.spec.ts', 'tools/**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
