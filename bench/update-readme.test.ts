// Checks README's Benchmark section splicing: added before "## Tests" once, replaced in place
// afterwards, the rest of the file untouched. No benchmark runs here.
import { describe, expect, it } from 'vitest';
import { spliceSection } from './update-readme';

const readme = '# Cohort\n\nIntro.\n\n## Tests\n\nRun them.\n';

describe('spliceSection', () => {
  it('adds a Benchmark section before Tests, then replaces only its body', () => {
    const once = spliceSection(readme, 'table v1');
    expect(once).toMatch(/## Benchmark\n\n<!-- bench:start[^\n]*-->\ntable v1\n<!-- bench:end -->\n\n## Tests/);
    const twice = spliceSection(once, 'table v2');
    expect(twice).toBe(once.replace('table v1', 'table v2'));
    expect(twice.match(/## Benchmark/g)).toHaveLength(1);
  });

  it('appends the section when there is no Tests heading', () => {
    expect(spliceSection('# Cohort\n', 'rows')).toMatch(/^# Cohort\n\n## Benchmark\n\n<!-- bench:start[^\n]*-->\nrows\n<!-- bench:end -->\n\n$/);
  });
});
