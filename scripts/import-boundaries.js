// ESLint rules `cohort/import-boundaries` (which folder may import which, DESIGN.md's layout, and which
// packages each folder may use) and `cohort/import-cycles` (no circle among product files). Import sources only.
import { statSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import ts from 'typescript';

const layers = ['src/engine', 'src/model', 'src/reference', 'src/gpu', 'src/protocol', 'src/remote', 'src/host', 'src/lib', 'src/app', 'workers', 'shaders', 'testing', 'examples', 'e2e', 'bench', 'tools', 'scripts'];
const uiPackages = ['react', 'react-dom', 'zustand', 'uplot'];
const nodeOnlyPackages = ['webgpu', 'node-llama-cpp', 'vitest', '@playwright/test', 'openai'];

/**
 * Per folder: `layers` it may import, `typeOnlyLayers` it may import with `import type` only,
 * `testOnlyLayers` its Node-only files may import, and `deniedPackages`. Node builtins are denied
 * everywhere except in Node-only files: *.test.ts, *.node.ts, *fixtures.ts, src/gpu/testing/node-gpu.ts.
 */
const policies = {
  'src/engine': { layers: ['src/engine'], deniedPackages: [...uiPackages, 'comlink', 'webgpu', '@webgpu/types'], why: 'the engine is pure and imports nothing outside itself' },
  'src/model': { layers: ['src/engine', 'src/model', 'src/protocol'], testOnlyLayers: ['src/reference', 'tools'], deniedPackages: [...uiPackages, 'comlink', 'webgpu', '@webgpu/types'], why: 'model code imports only engine types' },
  'src/reference': { layers: ['src/engine', 'src/model', 'src/reference'], testOnlyLayers: ['tools'], deniedPackages: [...uiPackages, 'comlink', 'webgpu', '@webgpu/types'], why: 'the CPU reference imports only engine and model code' },
  'src/gpu': { layers: ['src/engine', 'src/model', 'src/gpu', 'shaders'], testOnlyLayers: ['src/reference', 'tools'], deniedPackages: [...uiPackages, 'comlink'], why: 'gpu code imports engine/model types; CPU twins only in tests' },
  'src/protocol': { layers: ['src/protocol'], typeOnlyLayers: ['src/engine', 'src/model'], deniedPackages: [...uiPackages, 'comlink', 'webgpu'], why: 'the protocol is data only' },
  'src/remote': { layers: ['src/engine', 'src/protocol', 'src/remote'], testOnlyLayers: ['scripts'], deniedPackages: [...uiPackages, 'comlink', 'webgpu', '@webgpu/types'], why: 'a server backend speaks HTTP to the server and EngineApi to its caller; it is pure' },
  'src/lib': { layers: ['src/lib', 'src/protocol', 'src/remote'], testOnlyLayers: ['src/host', 'src/reference', 'tools'], deniedPackages: [...uiPackages, 'webgpu'], why: 'the library talks to the worker only through src/protocol and its one comlink file, src/lib/remote.ts' },
  'src/app': { layers: ['src/app', 'src/protocol'], deniedPackages: ['comlink', 'webgpu'], why: 'the UI talks to the worker only through src/protocol and src/app/engine-client.ts' },
  'src/host': { layers: ['src/engine', 'src/model', 'src/protocol', 'src/remote', 'src/host'], testOnlyLayers: ['src/reference', 'tools', 'testing'], deniedPackages: [...uiPackages, 'webgpu', '@webgpu/types'], why: 'the host wires engine, model and a runner factory; it is pure and runner-agnostic' },
  examples: { layers: ['examples', 'src/lib'], deniedPackages: ['react', 'react-dom', 'zustand', 'comlink', 'webgpu'], why: 'an example uses the library as another page would, nothing else of Cohort' },
  testing: { layers: ['testing', 'src/protocol', 'src/lib'], deniedPackages: ['react', 'react-dom', 'zustand', 'webgpu'], why: 'test pages drive the worker only through src/protocol and comlink, like the app, or through the library, like any page' },
  workers: { layers: ['workers', 'src/engine', 'src/model', 'src/reference', 'src/gpu', 'src/protocol', 'src/remote', 'src/host', 'shaders'], testOnlyLayers: ['tools', 'testing'], deniedPackages: uiPackages, why: 'the worker never imports UI code' },
};

/** The only UI file allowed to reach the worker module and the comlink adapter (libRemoteFile). */
const engineClientFile = 'src/app/engine-client.ts';
/** The one product file outside workers/ allowed to touch comlink: the adapter the library and the page share. */
const libRemoteFile = 'src/lib/remote.ts';
/** Folders whose every file may use comlink and reach the worker module (no UI components there). */
const comlinkLayers = ['workers', 'testing'];

function layerOf(relPath) {
  return layers.find((layer) => relPath === layer || relPath.startsWith(`${layer}/`)) ?? null;
}

function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function isNodeBuiltin(specifier) {
  return specifier.startsWith('node:') || builtinModules.includes(packageName(specifier));
}

function isNodeOnlyFile(relPath) {
  return /(\.test\.tsx?|\.node\.ts|fixtures\.ts)$/.test(relPath) || relPath === 'src/gpu/testing/node-gpu.ts';
}

/**
 * Dependency-free engine and model files any folder may import: the listener fan-out and the seeded
 * stream the page, the library and the protocol share with the engine, and the KV cache types and
 * their bytes per token (the load options' check, the model card). They import nothing themselves
 * (checked below), so no engine code comes with them.
 */
const sharedLeaves = ['src/engine/listeners', 'src/engine/seeded-random', 'src/engine/kv-types'];

function isSharedLeaf(relPath) {
  return sharedLeaves.includes(relPath.replace(/\.ts$/, ''));
}

/** Test-only folders not named testing/: the llama.cpp emulation behind the oracle test. */
const testOnlyFolders = ['src/reference/llama-cpp'];

/** Test and bench scaffolding: `testing/`, any `<folder>/testing/` and testOnlyFolders, never imported by product code. */
function isScaffoldingPath(relPath) {
  return relPath.split('/').includes('testing') || testOnlyFolders.some((folder) => relPath.startsWith(`${folder}/`));
}

/** Files that may import scaffolding: tests, Node-only files, scaffolding itself, and the tool folders. */
function mayUseScaffolding(relPath) {
  return isNodeOnlyFile(relPath) || isScaffoldingPath(relPath) || /\.spec\.ts$/.test(relPath) || ['e2e', 'bench', 'tools', 'scripts'].includes(layerOf(relPath));
}

function isTypeOnly(node) {
  if (node.importKind === 'type' || node.exportKind === 'type') return true;
  const specifiers = node.specifiers ?? [];
  return specifiers.length > 0 && specifiers.every((s) => s.importKind === 'type' || s.exportKind === 'type');
}

/** @type {import('eslint').Rule.RuleModule} */
export const importBoundaries = {
  meta: {
    type: 'problem',
    docs: { description: "Enforce DESIGN.md's import rules between folders and packages" },
    schema: [{ type: 'object', properties: { root: { type: 'string' } }, required: ['root'], additionalProperties: false }],
    messages: {
      layer: '{{from}} may not import {{to}}: {{why}}.',
      typeOnly: '{{from}} may import {{to}} with `import type` only: {{why}}.',
      testOnly: '{{from}} may import {{to}} only in tests: {{why}}.',
      package: "{{from}} may not import '{{name}}': {{why}}.",
      nodeBuiltin: "{{from}} runs in the browser: '{{name}}' is allowed only in tests and Node-only files.",
      comlink: `Only ${libRemoteFile} (and workers/, tests and test scaffolding) may import comlink; the page wraps the worker through it in ${engineClientFile}.`,
      testing: '{{from}} is product code: it may not import test scaffolding ({{to}}); only tests, testing/ folders, e2e/, bench/ and tools/ may.',
      worker: `Only ${engineClientFile} may reach the worker module.`,
      sharedLeaf: '{{from}} is a shared leaf that every folder may import: it may import nothing itself.',
    },
  },
  create(context) {
    const root = context.options[0].root;
    const relFile = path.relative(root, context.filename).split(path.sep).join('/');
    const fromLayer = layerOf(relFile);
    const policy = policies[fromLayer];
    if (!policy) return {};
    const isNodeOnly = isNodeOnlyFile(relFile);

    function check(node, specifier, typeOnly) {
      if (typeof specifier !== 'string') return;
      const report = (messageId, data) => context.report({ node, messageId, data: { from: fromLayer, why: policy.why, ...data } });
      if (isSharedLeaf(relFile)) {
        context.report({ node, messageId: 'sharedLeaf', data: { from: relFile } });
        return;
      }
      if (specifier.startsWith('.') || specifier.startsWith('/')) {
        const bare = specifier.split('?')[0];
        const target = specifier.startsWith('/') ? path.join(root, bare) : path.resolve(path.dirname(context.filename), bare);
        const toRel = path.relative(root, target).split(path.sep).join('/');
        const toLayer = layerOf(toRel);
        if (isScaffoldingPath(toRel) && !mayUseScaffolding(relFile)) report('testing', { to: toRel });
        if (toLayer === 'workers' && fromLayer === 'src/app') {
          if (relFile !== engineClientFile) report('worker');
          return;
        }
        if (relFile === engineClientFile && toRel.replace(/\.ts$/, '') === libRemoteFile.replace(/\.ts$/, '')) return;
        if (toLayer && policy.layers.includes(toLayer)) return;
        if (isSharedLeaf(toRel)) return;
        if (toLayer && policy.typeOnlyLayers?.includes(toLayer)) {
          if (!typeOnly) report('typeOnly', { to: toLayer });
          return;
        }
        if (toLayer && policy.testOnlyLayers?.includes(toLayer)) {
          if (!isNodeOnly) report('testOnly', { to: toLayer });
          return;
        }
        report('layer', { to: toLayer ?? path.relative(root, target) });
        return;
      }
      const name = packageName(specifier);
      if (isNodeBuiltin(specifier)) {
        if (!isNodeOnly) report('nodeBuiltin', { name: specifier });
        return;
      }
      if (name === 'comlink') {
        if (!comlinkLayers.includes(fromLayer) && relFile !== libRemoteFile && !mayUseScaffolding(relFile)) report('comlink');
        return;
      }
      if (policy.deniedPackages.includes(name)) {
        report('package', { name });
        return;
      }
      if (nodeOnlyPackages.includes(name) && !isNodeOnly) report('nodeBuiltin', { name });
    }

    return {
      ImportDeclaration: (node) => check(node, node.source.value, isTypeOnly(node)),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value, isTypeOnly(node)),
      ExportAllDeclaration: (node) => check(node, node.source.value, node.exportKind === 'type'),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value, false),
      TSImportType: (node) => check(node, node.source?.value ?? node.argument?.literal?.value, true),
    };
  },
};

/** Product code: what ships (src/ and workers/), not tests, Node-only files or scaffolding. */
function isProductFile(relPath) {
  return /^(src|workers)\//.test(relPath) && /\.tsx?$/.test(relPath) && !relPath.endsWith('.d.ts') && !mayUseScaffolding(relPath);
}

function isFile(absPath) {
  try {
    return statSync(absPath).isFile();
  } catch {
    return false;
  }
}

/** The file a relative or root-absolute specifier names, relative to root (as the bundler resolves it), or null. */
function resolveSpecifier(root, fromAbs, specifier) {
  if (!specifier.startsWith('.') && !specifier.startsWith('/')) return null;
  const bare = specifier.split('?')[0];
  const target = bare.startsWith('/') ? path.join(root, bare) : path.resolve(path.dirname(fromAbs), bare);
  const candidates = [target, target.replace(/\.js$/, '.ts'), `${target}.ts`, `${target}.tsx`, path.join(target, 'index.ts'), path.join(target, 'index.tsx')];
  const found = candidates.find(isFile);
  return found ? path.relative(root, found).split(path.sep).join('/') : null;
}

/** Per root: each product file's product imports as on disk (type-only ones too), read once per process. */
const diskGraphs = new Map();

function diskImports(root, relPath) {
  let graph = diskGraphs.get(root);
  if (!graph) diskGraphs.set(root, (graph = new Map()));
  let edges = graph.get(relPath);
  if (!edges) {
    const abs = path.join(root, relPath);
    // preProcessFile lists every import, export-from and import() source, `import type` included
    const { importedFiles } = ts.preProcessFile(readFileSync(abs, 'utf8'), true, true);
    edges = [...new Set(importedFiles.map((f) => resolveSpecifier(root, abs, f.fileName)).filter((rel) => rel !== null && isProductFile(rel)))];
    graph.set(relPath, edges);
  }
  return edges;
}

/** A path of product imports from `start` back to `goal` (both included), or null; `seen` is shared across searches from one file. */
function pathBack(root, start, goal, seen) {
  const stack = [[start, [start]]];
  while (stack.length > 0) {
    const [file, trail] = stack.pop();
    if (file === goal) return trail;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const next of diskImports(root, file)) stack.push([next, [...trail, next]]);
  }
  return null;
}

/** @type {import('eslint').Rule.RuleModule} */
export const importCycles = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid import circles among product files (type-only imports count)' },
    schema: [{ type: 'object', properties: { root: { type: 'string' } }, required: ['root'], additionalProperties: false }],
    messages: { cycle: 'Import circle among product files: {{circle}}. Move what both sides need into a file both may import, or pass a narrower type.' },
  },
  create(context) {
    const root = context.options[0].root;
    const relFile = path.relative(root, context.filename).split(path.sep).join('/');
    if (!isProductFile(relFile)) return {};
    const imports = [];
    const collect = (node, specifier) => typeof specifier === 'string' && imports.push({ node, specifier });
    return {
      ImportDeclaration: (node) => collect(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && collect(node, node.source.value),
      ExportAllDeclaration: (node) => collect(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && collect(node, node.source.value),
      TSImportType: (node) => collect(node, node.source?.value ?? node.argument?.literal?.value),
      // the file's own imports as written now (the editor's text), the rest of the graph as on disk
      'Program:exit': () => {
        const seen = new Set();
        for (const { node, specifier } of imports) {
          const target = resolveSpecifier(root, context.filename, specifier);
          if (!target || !isProductFile(target) || target === relFile) continue;
          const trail = pathBack(root, target, relFile, seen);
          if (trail) context.report({ node, messageId: 'cycle', data: { circle: [relFile, ...trail].join(' -> ') } });
        }
      },
    };
  },
};
