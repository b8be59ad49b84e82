// `npm run build`'s last step: the migrated, empty PGlite data directory shipped as dist/pglite-image.tar.gz
// (src/store/pglite-image.ts says why). Runs the compiled code, so it needs `tsc` to have run first.
import { writeShippedImage } from '../dist/store/pglite-image.js';

await writeShippedImage();
