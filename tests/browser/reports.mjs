// The centre manager's page (dispatch-api's /reports) in headless Chromium. Started by
// tests/tests/browser.rs (`the_managers_page_shows_the_reports_numbers_in_a_real_browser`),
// which runs dispatch-api on a fresh database with the demo data. Signs in, reads the numbers
// the page shows and compares them with the JSON report the API answers for the same range.
// Prints one line per check and "N passed, N failed"; exits non-zero on the first failure.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { assertIconServed, failedAnswers } from './page_checks.mjs';

function env(name) {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run this through tests/tests/browser.rs (see tests/README.md)`);
  }
  return value;
}

const DISPATCH = env('DISPATCH_URL');
const ADMIN = env('ADMIN_TOKEN');
const FLEET = env('FLEET_TOKEN');
const SHOTS = process.env.SCREENSHOTS_DIR;
const PAGE = `${DISPATCH}/reports`;

let passed = 0;
let failed = 0;

async function check(name, body) {
  try {
    await body();
    passed += 1;
    console.log(`ok - ${name}`);
  } catch (e) {
    failed += 1;
    console.log(`not ok - ${name}\n${e.stack ?? e}`);
    throw e;
  }
}

async function shot(page, name) {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

async function andWait(page, action) {
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), action()]);
}

/** As the page shows every time: h:mm:ss; — for none. */
function clock(seconds) {
  if (seconds === null) return '—';
  const s = Math.round(seconds);
  const two = (n) => String(n).padStart(2, '0');
  return `${Math.floor(s / 3600)}:${two(Math.floor((s % 3600) / 60))}:${two(s % 60)}`;
}

/** Text as a person reads it: white space (the template's line breaks) as one space. */
function squash(text) {
  return text.replace(/\s+/g, ' ').trim();
}

/** Fewer measures than this show no p50 or p90 (the page's legend says so). */
const MIN_FOR_PERCENTILES = 5;

function percentile(seconds, count) {
  return count < MIN_FOR_PERCENTILES ? '—' : clock(seconds);
}

/** The kinds of health unit that are not a hospital's door (no emergency room). */
const HEALTH_POSTS = /^(Unidade Básica de Saúde|Posto de Saúde|Centro de Saúde|Clínica da Família|Policlínica|CAPS) /;

function percent(share) {
  return share === null ? '—' : `${(share * 100).toFixed(1).replace('.', ',')}%`;
}

async function report(from, to) {
  const url = `${DISPATCH}/reports/response-times?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
  const res = await fetch(url, { headers: { Authorization: `Bearer ${ADMIN}` } });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text);
}

/** The rows of a table the page shows: {phase: {count, p50, p90, max, share, ...}}. */
async function rows(page, id) {
  return page.$$eval(`#${id} tbody tr`, (trs) => Object.fromEntries(trs.map((tr) => [
    tr.dataset.phase,
    Object.fromEntries([...tr.querySelectorAll('td[data-field]')].map((td) => [td.dataset.field, td.textContent.trim()])),
  ])));
}

function compare(shown, json, what) {
  // The telephone's ring-to-answer first (judged from the calls), then the incidents' eleven
  // phases, as the page's tables list them.
  const phases = [json.telephone.all.ring_to_answer, ...json.groups[0].phases];
  assert.equal(phases[0].phase, 'ring_to_answer', `${what}: the telephone first`);
  assert.equal(Object.keys(shown).length, 12, `${what}: every phase`);
  for (const p of phases) {
    const row = shown[p.phase];
    assert.ok(row, `${what}: ${p.phase} shown`);
    assert.equal(row.count, String(p.count), `${what} ${p.phase} count`);
    assert.equal(row.p50, percentile(p.p50_seconds, p.count), `${what} ${p.phase} p50`);
    assert.equal(row.p90, percentile(p.p90_seconds, p.count), `${what} ${p.phase} p90`);
    assert.equal(row.max, clock(p.max_seconds), `${what} ${p.phase} max`);
    assert.equal(row.share, percent(p.within_target_share), `${what} ${p.phase} share`);
    assert.equal(row.missing, String(p.missing), `${what} ${p.phase} missing`);
    assert.equal(row.out_of_order, String(p.out_of_order), `${what} ${p.phase} out of order`);
  }
}

const browser = await chromium.launch({ executablePath: env('CHROMIUM'), headless: true });
const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, locale: 'pt-BR' });
const page = await context.newPage();
const outside = [];
page.on('request', (r) => {
  if (!r.url().startsWith(DISPATCH)) outside.push(r.url());
});

try {
  await check('without a session the page sends to sign-in, in Portuguese, with its icon', async () => {
    const failed = failedAnswers(page);
    await page.goto(PAGE);
    assert.equal(new URL(page.url()).pathname, '/reports/entrar');
    assert.equal(await page.getAttribute('html', 'lang'), 'pt-BR');
    assert.equal(await page.getAttribute('#token', 'type'), 'password');
    assert.equal(await page.textContent('label[for=token]'), 'Token de acesso');
    await assertIconServed(page, failed);
    page.removeAllListeners('response');
    await shot(page, 'reports-sign-in');
  });

  await check("a fleet operator's token is refused, saying which profiles may", async () => {
    await page.fill('#token', FLEET);
    await andWait(page, () => page.click('button[type=submit]'));
    assert.match(await page.textContent('[role=alert]'), /O perfil OPERADOR_FROTA não tem acesso/);
  });

  await check('an ADMIN token signs in; the session cookie is HttpOnly, Strict, on /reports only', async () => {
    await page.fill('#token', ADMIN);
    await andWait(page, () => page.click('button[type=submit]'));
    assert.equal(new URL(page.url()).pathname, '/reports');
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'reports_session');
    assert.ok(session, JSON.stringify(cookies));
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    assert.equal(session.path, '/reports');
    assert.equal(session.expires, -1, 'a session cookie');
    assert.match(session.value, /^[A-Za-z0-9_-]{43}$/, "a random id, not the token");
    assert.ok(!(await page.content()).includes(ADMIN), 'the token is not on the page');
    assert.ok(!page.url().includes(ADMIN));
  });

  await check("today's numbers are the JSON report's for today", async () => {
    // The range the page covered: its two tables' data and the API's report of the same.
    const json = await report(env('TODAY_FROM'), env('NOW'));
    const shown = await rows(page, 'tabela-hoje');
    assert.equal(await page.getAttribute('#tabela-hoje', 'data-incidents'), String(json.incidents));
    compare(shown, json, 'today');
  });

  await check("the last 7 days' numbers are the JSON report's, with two SVG charts drawn by the server", async () => {
    const json = await report(env('WEEK_FROM'), env('WEEK_TO'));
    assert.ok(json.incidents > 0, 'the demo week has calls');
    compare(await rows(page, 'tabela-periodo'), json, 'week');
    const response = json.groups[0].phases.find((p) => p.phase === 'response');
    assert.ok(response.count > 0);
    const charts = await page.$$eval('section.chart svg', (svgs) => svgs.map((s) => s.getAttribute('aria-label')));
    assert.equal(charts.length, 2);
    assert.match(charts[0], new RegExp(`Distribuição de ${response.count} tempos-resposta`));
    assert.equal(outside.length, 0, `nothing loaded from elsewhere: ${outside}`);
    await shot(page, 'reports');
  });

  await check('the page reads one way: a legend, every time h:mm:ss, no route of the API in its text', async () => {
    const legend = squash(await page.textContent('#legenda'));
    assert.match(legend, /todo tempo está em h:mm:ss/);
    assert.match(legend, /Com menos de 5 medidas não há p50 nem p90/);
    const body = squash(await page.textContent('main'));
    assert.doesNotMatch(body, /GET \/|response-targets/);
    const times = await page.$$eval('td[data-field=p50], td[data-field=p90], td[data-field=max]',
      (tds) => tds.map((td) => td.textContent.trim()));
    assert.ok(times.length > 30);
    for (const t of times) assert.match(t, /^(—|\d+:\d{2}:\d{2})$/);
    assert.doesNotMatch(body, /\d+ min\b/, 'no time in minutes beside the h:mm:ss ones');
  });

  await check("the charts' axes read as the tables do, in text a person can read", async () => {
    const labels = await page.$$eval('section.chart svg', (svgs) => svgs.map((svg) =>
      [...svg.querySelectorAll('text')].map((t) => t.textContent.trim())));
    const [distribution, hourly] = labels;
    assert.ok(distribution.includes('0:10:00'), JSON.stringify(distribution));
    assert.ok(distribution.includes('1:00:00+'), JSON.stringify(distribution));
    assert.ok(hourly.includes('100,0%') && hourly.includes('0,0%'), JSON.stringify(hourly));
    for (const l of [...distribution, ...hourly]) assert.doesNotMatch(l, /^\d+\.\d+$/, 'no 100.0');
    // Each text's size on the screen: its font size times the chart's scale.
    const sizes = await page.$$eval('section.chart svg text', (texts) => texts.map((t) => {
      const svg = t.ownerSVGElement;
      const scale = svg.getBoundingClientRect().width / svg.width.baseVal.value;
      return parseFloat(getComputedStyle(t).fontSize) * scale;
    }));
    assert.ok(sizes.length > 20);
    assert.ok(Math.min(...sizes) >= 14, `the smallest chart text is ${Math.min(...sizes)} px`);
  });

  await check("the offload board: the centre's own hospitals, units held past the alert, p50/p90 only with their count", async () => {
    const res = await fetch(`${DISPATCH}/health-unit/offload`, { headers: { Authorization: `Bearer ${ADMIN}` } });
    const board = await res.json();
    const over = board.hospitals.flatMap((h) => h.at_door).filter((u) => u.over_target);
    assert.ok(over.length > 0);
    const text = squash(await page.textContent('#tabela-retencao'));
    for (const u of over) {
      // Its time at the door, h:mm:ss as the page rendered it (seconds before this read).
      const shown = text.match(new RegExp(`${u.mobile_unit.name} · ocorrência ${u.incident.number} · (\\d+):(\\d{2}):(\\d{2})`));
      assert.ok(shown, `${u.mobile_unit.name} in ${text}`);
      const seconds = Number(shown[1]) * 3600 + Number(shown[2]) * 60 + Number(shown[3]);
      assert.ok(Math.abs(seconds - u.held_seconds) < 120, `${shown[0]}: held ${u.held_seconds} s`);
    }
    assert.equal(await page.locator('#tabela-retencao .over').count(), over.length);
    assert.match(squash(await page.textContent('#retencao + .hint')), /as cidades das suas bases \(São José dos Campos\)/);
    const rows = await page.$$eval('#tabela-retencao tbody tr', (trs) => trs.map((tr) =>
      Object.fromEntries([...tr.querySelectorAll('td[data-field]')].map((td) => [td.dataset.field, td.textContent.trim()]))));
    assert.equal(rows.length, board.hospitals.length, 'the demo sends units to its own city only');
    for (const h of board.hospitals) {
      const name = `${h.health_unit.name} (${h.health_unit.city}/${h.health_unit.uf})`;
      assert.equal(h.health_unit.city, 'São José dos Campos', name);
      assert.doesNotMatch(h.health_unit.name, HEALTH_POSTS, `${name} is no hospital`);
      const row = rows.find((r) => r.name === name);
      assert.ok(row, `${name} shown`);
      assert.equal(row.holds, String(h.today.holds), name);
      assert.equal(row.p50, percentile(h.today.p50_seconds, h.today.holds), name);
      assert.equal(row.p90, percentile(h.today.p90_seconds, h.today.holds), name);
      assert.equal(row.max, clock(h.today.max_seconds), name);
    }
    assert.equal(await page.locator('#fora-da-area').count(), 0);
    await page.locator('#retencao').scrollIntoViewIfNeeded();
  });

  await check('a chosen range, and its CSV link', async () => {
    await page.fill('#de', env('DAY'));
    await page.fill('#ate', env('DAY'));
    await andWait(page, () => page.click('form.inline button[type=submit]'));
    const json = await report(env('DAY_FROM'), env('DAY_TO'));
    compare(await rows(page, 'tabela-periodo'), json, 'one day');
    const href = await page.getAttribute('#csv', 'href');
    assert.equal(href, `/reports/tempos.csv?de=${env('DAY')}&ate=${env('DAY')}`);
    const csv = await page.request.get(`${DISPATCH}${href}`);
    assert.equal(csv.status(), 200);
    assert.equal(csv.headers()['content-type'], 'text/csv; charset=utf-8');
    const lines = (await csv.text()).trim().split('\n');
    assert.match(lines[0], /^group,label,phase,count,p50_seconds/);
    assert.ok(lines.length > 1);
  });

  await check('a cross-site sign-out is refused; "Sair" ends the session, and a copy of its cookie opens nothing', async () => {
    const cross = await page.request.post(`${PAGE}/sair`, { headers: { 'Sec-Fetch-Site': 'cross-site' }, maxRedirects: 0 });
    assert.equal(cross.status(), 403);
    const old = (await context.cookies()).find((c) => c.name === 'reports_session');
    assert.ok(old);
    await andWait(page, () => page.click('.who button'));
    assert.equal(new URL(page.url()).pathname, '/reports/entrar');
    await page.goto(PAGE);
    assert.equal(new URL(page.url()).pathname, '/reports/entrar');
    await context.addCookies([old]);
    await page.goto(PAGE);
    assert.equal(new URL(page.url()).pathname, '/reports/entrar');
  });
} finally {
  await browser.close();
  console.log(`${passed} passed, ${failed} failed`);
}
