#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run automatically by `npm install`).
// Node 22's on-disk compile cache makes every start after the first skip compiling the modules it loads (a few
// hundred ms of `leasehold serve`'s start); Node 20 has none and starts as before.
import * as nodeModule from 'node:module';

nodeModule.enableCompileCache?.();
import('../dist/cli/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli/main.js')) {
    console.error('leasehold: not built yet; run `npm install` (or `npm run build`) in the checkout first');
    process.exit(1);
  }
  throw err;
});
