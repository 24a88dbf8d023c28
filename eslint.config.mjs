// Lint: typescript-eslint's recommended rules on every TypeScript file; formatting is prettier's job.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'examples/*/dist/**',
      'examples/*/node_modules/**',
      '.tmp/**',
      'data/**',
      'src/validation/generated/**',
      'plugins/*/generated/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-require-imports': 'off',
      'no-empty': ['error', { allowEmptyCatch: true }],
      '@typescript-eslint/no-unused-expressions': ['error', { allowShortCircuit: true, allowTernary: true }],
    },
  },
  // The rooms' doors (CONTRIBUTING.md, "Who may import what"; issue 42). Tests, bench/ and scripts/ may still import
  // internals.
  {
    files: ['plugins/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+src(/(?!plugin(/procedures)?$)|$)',
              message:
                "A built-in plugin imports the core only through '../../src/plugin' (model-gateway/plugin), " +
                "and its store procedures through '../../../src/plugin/procedures'.",
            },
            {
              regex: '^\\.\\./(?!\\.\\./)|(^|/)plugins/',
              message: 'No plugin imports another: meet through services.shared slots, the state or the core.',
            },
          ],
        },
      ],
    },
  },
  // A plugin's sub-folders (store/, pages/): '../' is the plugin's own folder there, '../../' another plugin.
  {
    files: ['plugins/*/*/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+src(/(?!plugin(/procedures)?$)|$)',
              message:
                "A built-in plugin imports the core only through '../../src/plugin' (model-gateway/plugin), " +
                "and its store procedures through '../../../src/plugin/procedures'.",
            },
            {
              regex: '^\\.\\./\\.\\./(?!\\.\\./)|(^|/)plugins/',
              message: 'No plugin imports another: meet through services.shared slots, the state or the core.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)plugins(/|$)',
              message: 'The core never imports a plugin: plugins register routes, slots and CLI commands instead.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    languageOptions: { globals: { ...globals.node } },
  },
);
