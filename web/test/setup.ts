import { configure } from '@testing-library/react';

// findBy*/waitFor give up after 1 s by default: under CI's full run (load 10+ on 2 cores) a page's first render
// and fetches took 2.3 s and a test failed that passes alone in 0.9 s. A real failure still fails, 10 s later.
configure({ asyncUtilTimeout: 10_000 });
