// dist/ is committed (so `npm install <path>` needs no compiler: npm does not install a
// directory dependency's devDependencies, so a `prepare` build could not run there).
// This fails when dist/ is not exactly what tsc makes of src/ (`npm run build` fixes it).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

test('dist/ is the tsc build of src/', () => {
  const out = mkdtempSync(path.join(tmpdir(), 'mindgate-dist-'));
  try {
    execFileSync(process.execPath, [path.join(pkg, 'node_modules/typescript/bin/tsc'), '-p', path.join(pkg, 'tsconfig.json'), '--outDir', out], { stdio: 'pipe' });
    const fresh = readdirSync(out).sort();
    assert.deepEqual(readdirSync(path.join(pkg, 'dist')).sort(), fresh, 'the same files');
    for (const file of fresh) {
      assert.equal(readFileSync(path.join(pkg, 'dist', file), 'utf8'), readFileSync(path.join(out, file), 'utf8'), `dist/${file} is stale: npm run build`);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
