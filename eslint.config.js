import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'docs/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-control-regex': 'off',
      eqeqeq: ['error', 'always'],
      // Configuration is read in src/config.ts only (conventions: config in one place).
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read the environment in src/config.ts only.' }],
    },
  },
  {
    // The dashboard's browser modules (served as they are, no build step).
    files: ['public/**/*.js'],
    languageOptions: { sourceType: 'module', globals: globals.browser },
  },
  {
    files: ['src/config.ts', 'test/**', 'bench/**', 'scripts/**', 'bin/**'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
