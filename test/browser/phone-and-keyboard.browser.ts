import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, signIn, startBrowserServer, type BrowserServer } from '../support/browser.js';

const avail = chromiumAvailable();
const ADMIN = 'lh_browser-phone-admin-token-0123456789abcdef';

/** Usable at phone width (390 × 844) and with the keyboard alone: the accessibility requirement. */
describe.skipIf(!avail.ok)('the UI at phone width and from the keyboard', () => {
  let lh: BrowserServer;
  let browser: Browser;

  beforeAll(async () => {
    [lh, browser] = await Promise.all([startBrowserServer(ADMIN), launchChromium()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await lh?.stop();
  });

  it('at 390 × 844: the navigation and the nodes page fit the screen and work by touch', async () => {
    const context = await browser.newContext({ baseURL: lh.url, viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      // pat's project owns three nodes: a table with rows to lay out.
      await signIn(page, lh.tokens.pat);
      await page.getByRole('heading', { level: 1, name: 'Nodes', exact: true }).waitFor();
      const table = page.getByRole('region', { name: 'Nodes', exact: true });
      for (const name of ['gpu-1', 'gpu-2', 'cpu-1']) await table.getByRole('row', { name: new RegExp(name) }).waitFor();

      // Nothing sticks out sideways: no horizontal scrolling of the page.
      expect(await horizontalOverflow(page)).toBe(0);
      // Every navigation link, the sign-out button and the search fields are on screen (wrapped, not cut off).
      const nav = page.getByRole('navigation', { name: 'Main' });
      const links = await nav.getByRole('link').all();
      expect(links.length).toBeGreaterThanOrEqual(2);
      for (const control of [
        ...links,
        page.getByRole('button', { name: 'Sign out' }),
        page.getByRole('searchbox', { name: 'Search' }),
        page.getByRole('textbox', { name: 'Requirement expression' }),
        page.getByRole('button', { name: 'Apply' }),
      ]) {
        await expectOnScreen(page, control);
      }
      // The table's rows are stacked cards: each fits the screen's width, facts labelled.
      const row = table.getByRole('row', { name: /gpu-1/ });
      await expectOnScreen(page, row);
      expect(await row.textContent()).toMatch(/64 GiB/);

      // Filtering works by touch.
      await page.getByRole('textbox', { name: 'Requirement expression' }).tap();
      await page.keyboard.type('gpus >= 2');
      await page.getByRole('button', { name: 'Apply' }).tap();
      await expect.poll(() => table.getByRole('row').count()).toBe(2); // header + gpu-2
      await table.getByRole('row', { name: /gpu-2/ }).waitFor();
      expect(await horizontalOverflow(page)).toBe(0);

      // The navigation leads to the other pages.
      await nav.getByRole('link', { name: 'Leases', exact: true }).tap();
      await page.getByRole('heading', { level: 1, name: 'Leases', exact: true }).waitFor();
      expect(await nav.getByRole('link', { name: 'Leases', exact: true }).getAttribute('aria-current')).toBe('page');
      expect(await horizontalOverflow(page)).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('signs in and moves between pages with the keyboard only, with a visible focus', async () => {
    const context = await browser.newContext({ baseURL: lh.url, viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto('/');
      await page.getByLabel('Token', { exact: true }).waitFor();
      // The token field has the focus from the start: type, Tab to the button, Enter.
      expect(await focused(page)).toMatchObject({ tag: 'INPUT', label: 'Token' });
      await page.keyboard.type(lh.tokens.ada);
      await page.keyboard.press('Tab');
      expect(await focused(page)).toMatchObject({ tag: 'BUTTON', text: 'Sign in' });
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Nodes', exact: true }).waitFor();

      // Tab first reaches "Skip to content", then the navigation; each focus is drawn.
      await page.keyboard.press('Tab');
      expect(await focused(page)).toMatchObject({ tag: 'A', text: 'Skip to content', outline: true });
      let reached = false;
      for (let i = 0; i < 10 && !reached; i++) {
        await page.keyboard.press('Tab');
        reached = (await focused(page)).text === 'Leases';
      }
      expect(reached, 'Tab never reached the "Leases" link').toBe(true);
      expect(await focused(page)).toMatchObject({ tag: 'A', outline: true });
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Leases', exact: true }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/leases');
    } finally {
      await context.close();
    }
  });
});

/** How many CSS pixels the page is wider than the viewport. */
async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const doc = (globalThis as any).document;
    return Math.max(0, doc.documentElement.scrollWidth - doc.documentElement.clientWidth);
  });
}

async function expectOnScreen(page: Page, locator: ReturnType<Page['locator']>): Promise<void> {
  await locator.scrollIntoViewIfNeeded();
  const box = await locator.boundingBox();
  const width = page.viewportSize()!.width;
  expect(box, `${locator} has no box`).not.toBeNull();
  expect(box!.x, `${locator} starts off screen`).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width, `${locator} ends off screen`).toBeLessThanOrEqual(width + 0.5);
  expect(box!.height).toBeGreaterThan(0);
}

/** The focused element: its tag, text, label, and whether a focus outline is drawn. */
function focused(page: Page): Promise<{ tag: string; text: string; label: string | null; outline: boolean }> {
  return page.evaluate(() => {
    const el = (globalThis as any).document.activeElement;
    const style = (globalThis as any).getComputedStyle(el);
    const label = el.labels?.[0]?.textContent ?? el.getAttribute('aria-label');
    return {
      tag: el.tagName,
      text: (el.textContent ?? '').trim(),
      label,
      outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0,
    };
  });
}
