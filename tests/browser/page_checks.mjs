// Checks both page sets share (tests/browser/console.mjs and reports.mjs): what a person's
// browser asks for beside the page itself.

import assert from 'node:assert/strict';

/**
 * The page names its icon (`<link rel="icon">`), and that icon is served: the browser asks
 * for no `/favicon.ico` that answers 404. `failed` is the list of this page's answers of 400
 * or more, collected since it loaded.
 */
export async function assertIconServed(page, failed) {
  const href = await page.getAttribute('link[rel="icon"]', 'href');
  assert.ok(href, 'the page names its icon');
  const res = await page.request.get(new URL(href, page.url()).href);
  assert.equal(res.status(), 200, `${href} answers`);
  assert.equal(res.headers()['content-type'], 'image/svg+xml');
  assert.match(await res.text(), /^<svg /);
  assert.deepEqual(failed, [], 'no request of the page failed');
}

/** Collects the answers of 400 or more a page gets (its icon's included), as `status url`. */
export function failedAnswers(page) {
  const failed = [];
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
  });
  return failed;
}
