#!/usr/bin/env node
// Generates src/validation/generated/*.ts and plugins/<name>/generated/*.ts: ajv's standalone code for every JSON
// Schema the gateway knows when it is built (its config, the request and admin bodies, the built-in plugins' config
// sections), each beside its owner (a plugin's bodies in its folder), so that the gateway starts
// without loading ajv or compiling a schema (no code generation, no eval, none of the optimizing compiler's work
// on ajv's code generator). Each group is compiled with the options the gateway used to compile it with at run time,
// so validation and its errors are the same. `npm run build` runs it first; test/core/validators.test.ts fails
// when a committed file is not what this would write. Writes a file only when its text changes.
'use strict';
const { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } = require('node:fs');
const { dirname, join, relative } = require('node:path');

const root = join(__dirname, '..');
const outDir = join(root, 'src', 'validation', 'generated');

/** Load a TypeScript module of the repository (schemas are written in TypeScript). */
function load(rel) {
  require('tsx/cjs');
  return require(join(root, rel));
}

const base = { allErrors: true, strict: false };
const bodyOptions = { ...base, useDefaults: true };
/** A plugin's admin or form bodies: one schema of plugins/<name>/bodies.ts, into plugins/<name>/generated/bodies.ts. */
const pluginBodies = (plugin, name, schema) => ({
  file: `plugins/${plugin}/generated/bodies`,
  exportName: 'bodies',
  what: `the ${plugin} plugin's bodies (plugins/${plugin}/bodies.ts)`,
  options: bodyOptions,
  schemas: () => ({ [name]: load(`plugins/${plugin}/bodies.ts`)[schema] }),
});
// `file`: where the group's file goes, from the repository's root, without .ts.
const groups = [
  {
    file: 'src/validation/generated/config',
    what: 'the config file (src/config/schema.ts)',
    options: { ...base, useDefaults: true, verbose: true },
    schemas: () => ({ config: load('src/config/schema.ts').configSchema }),
  },
  {
    file: 'src/validation/generated/bodies',
    what: 'the admin API bodies of accounts and keys (src/api/admin-bodies.ts)',
    options: bodyOptions,
    schemas: () => {
      const admin = load('src/api/admin-bodies.ts');
      return {
        account: admin.accountBody,
        amount: admin.amountBody,
        newKey: admin.newKeyBody,
        keyPatch: admin.keyPatchBody,
      };
    },
  },
  pluginBodies('limits', 'limitSettings', 'limitSettingsSchema'),
  pluginBodies('console', 'signIn', 'signInBody'),
  pluginBodies('oauth', 'keyExchange', 'keyExchangeBody'),
  pluginBodies('mcp', 'access', 'accessBody'),
  pluginBodies('guardrails', 'policyBody', 'policyBodySchema'),
  pluginBodies('routing', 'preset', 'presetBody'),
  {
    file: 'plugins/cache/generated/bodies',
    exportName: 'bodies',
    what: "the cache plugin's bodies (plugins/cache/bodies.ts)",
    options: bodyOptions,
    schemas: () => {
      const b = load('plugins/cache/bodies.ts');
      return { purge: b.purgeBody, setting: b.settingBody };
    },
  },
  {
    file: 'plugins/params/generated/requests',
    what: 'request bodies the params plugin checks (plugins/params/request-schema.ts)',
    options: base,
    schemas: () => {
      const s = load('plugins/params/request-schema.ts');
      return {
        chatRequest: s.chatRequestSchema,
        gatewayOptions: s.gatewayOptionsSchema,
        embeddings: s.embeddingsSchema,
      };
    },
  },
  {
    // Last: the plugins' modules import the files generated above.
    file: 'src/validation/generated/plugin-configs',
    what: "the built-in plugins' configSchema (plugins/<name>/index.ts), in strict mode as src/pipeline/loader.ts",
    options: { ...base, useDefaults: true, strict: true, strictRequired: false, verbose: true },
    schemas: () => {
      const dir = join(root, 'plugins');
      const out = {};
      // As builtinPluginNames() in src/pipeline/loader.ts (which loads this group's file, so it is not loaded here).
      const builtins = readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'index.ts')))
        .map((d) => d.name)
        .sort();
      for (const name of builtins) {
        const mod = load(`plugins/${name}/index.ts`);
        out[name] = (mod.default ?? mod).configSchema;
      }
      return out;
    },
  },
];

/** The text of one group's file. */
function generate(group) {
  const { default: Ajv } = require('ajv');
  const { default: standaloneCode } = require('ajv/dist/standalone');
  const ajv = new Ajv({ ...group.options, code: { source: true, esm: true, lines: true } });
  const schemas = group.schemas();
  const names = Object.keys(schemas);
  for (const n of names) ajv.addSchema(schemas[n], n);
  const exported = {};
  const code = standaloneCode(ajv, Object.fromEntries(names.map((n) => [n, n])))
    .replace(/^"use strict";\n?/, '')
    // Kept under one typed object rather than exported one by one (their inferred types would be `any`).
    .replace(/^export const (\w+) = (\w+);\n/gm, (_, name, fn) => ((exported[name] = fn), ''));
  const id = (n) => (/^[A-Za-z_$][\w$]*$/.test(n) ? n : JSON.stringify(n));
  const keys = names.map((n) => JSON.stringify(n)).join(' | ');
  const fileName = group.file.slice(group.file.lastIndexOf('/') + 1);
  const exportName = group.exportName ?? fileName.replace(/-(\w)/g, (_, c) => c.toUpperCase());
  // A plugin's validators take the type from the public plugin API, the one door plugins import the core by.
  const validatorType = group.file.startsWith('plugins/')
    ? relative(dirname(group.file), 'src/plugin')
    : '../validator';
  return [
    '// @ts-nocheck',
    '/* eslint-disable */',
    `// Generated by scripts/gen-validators.js from ${group.what}: do not edit. \`npm run build\` writes it again.`,
    `// ajv ${require('ajv/package.json').version}, options ${JSON.stringify(group.options)}.`,
    `import type { Validator } from '${validatorType}';`,
    '',
    code.trimEnd(),
    '',
    `export const ${exportName}: Readonly<Record<${keys}, Validator>> = {`,
    ...names.map((n) => `  ${id(n)}: ${exported[n]},`),
    '};',
    '',
  ].join('\n');
}

/**
 * Every group's file: its path from outDir without .ts (`config`, `../../../plugins/params/generated/requests`) ->
 * text. Writes each as it goes when `write` (later groups load earlier ones).
 */
function generateAll(write = false) {
  const out = {};
  for (const g of groups) {
    const text = generate(g);
    const path = join(root, `${g.file}.ts`);
    out[relative(outDir, path).replace(/\.ts$/, '')] = text;
    if (write && (!existsSync(path) || readFileSync(path, 'utf8') !== text)) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
    }
  }
  return out;
}

module.exports = { generateAll, outDir };

if (require.main === module) generateAll(true);
