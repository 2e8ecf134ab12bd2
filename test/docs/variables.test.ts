import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/config.js';

// README.md, "Operating it": every environment variable the service reads is documented there
// (CONFIG_VARIABLES is the list loadConfig reads from: its reader takes no other name).

describe('the environment variables', () => {
  it('README.md documents each variable the service reads', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const undocumented = CONFIG_VARIABLES.filter((name) => !readme.includes(`\`${name}\``));
    expect(CONFIG_VARIABLES.length).toBeGreaterThan(20);
    expect(undocumented).toEqual([]);
  });
});
