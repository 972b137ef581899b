// Prints a package's production dependency closure (itself first) as folders under node_modules, for pack.sh.
// Not a resolver for anything else: dependencies only, never optional or peer ones, resolved the way Node finds them.
const { existsSync, readFileSync } = require('node:fs');
const { dirname, join, relative } = require('node:path');

const [root, name] = [process.cwd(), process.argv[2]];
const modules = join(root, 'node_modules');
const seen = new Set();

/** The folder Node would load `dep` from when `from` requires it: the nearest node_modules above. */
function locate(dep, from) {
  for (let dir = from; dir.startsWith(modules); dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', dep);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
  }
  const top = join(modules, dep);
  if (existsSync(join(top, 'package.json'))) return top;
  throw new Error(`${dep} (needed by ${relative(modules, from)}) is not installed`);
}

function visit(dir) {
  if (seen.has(dir)) return;
  seen.add(dir);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  for (const dep of Object.keys(pkg.dependencies ?? {})) visit(locate(dep, dir));
}

visit(locate(name, modules));
// a nested folder (pkg/node_modules/dep) travels inside its package's own folder
for (const dir of seen) if (!relative(modules, dir).includes('node_modules')) console.log(relative(modules, dir));
