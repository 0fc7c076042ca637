// The integrations console (/admin/integracao) and both /docs pages in headless Chromium.
// Started by tests/tests/browser.rs, which runs the services on a fresh database, prepares
// the data named in the environment below, and checks the database afterwards. Every check
// here is on what the screen shows. Prints one line per check and "N passed, N failed";
// exits non-zero on the first failure.

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

const CALLBACK = env('CALLBACK_URL');
const DISPATCH = env('DISPATCH_URL');
const ADMIN_A = env('ADMIN_TOKEN_A');
const ADMIN_B = env('ADMIN_TOKEN_B');
const DISPATCH_TOKEN = env('DISPATCH_TOKEN');
const FAILED_RECEIPT = env('FAILED_RECEIPT_ID');
const FAILED_PROPOSAL = env('FAILED_PROPOSAL');
const FAILED_MARKUP = env('FAILED_MARKUP');
const STORY_PROPOSAL = env('STORY_PROPOSAL');
const OTHER_PROPOSAL = env('OTHER_PROPOSAL');
const OTHER_SECRET = env('OTHER_SECRET');
const OTHER_RECEIPT = env('OTHER_RECEIPT_ID');
const OTHER_INTEGRATION = env('OTHER_INTEGRATION_ID');
const SILENT_INSURER = env('SILENT_INSURER');
const RESUME_PROPOSAL = env('RESUME_PROPOSAL');
const BULK_PROPOSAL = env('BULK_PROPOSAL');
const RETRY_PROPOSAL = env('RETRY_PROPOSAL');
const ERASED_RECEIPT = env('ERASED_RECEIPT_ID');
const SHOTS = process.env.SCREENSHOTS_DIR;
const CONSOLE = `${CALLBACK}/admin/integracao`;

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
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}

/** Clicks (or presses) something that submits a form, and waits for the page it leads to. */
async function andWait(page, action) {
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), action()]);
}

async function text(locator) {
  return (await locator.innerText()).replace(/\s+/g, ' ').trim();
}

async function flash(page) {
  return text(page.locator('.flash'));
}

/** The cells of a table's body rows after the first (its header cell), joined by " | ". */
async function rowsAfterFirst(page) {
  return (await page.locator('tbody tr').allInnerTexts()).map((r) =>
    r.split('\t').slice(1).map((c) => c.replace(/\s+/g, ' ').trim()).join(' | '));
}

/** The row of the integrations table whose header cell names the insurer. */
function integrationRow(page, insurer) {
  return page.locator('tbody tr', { has: page.locator('th', { hasText: insurer }) });
}

/**
 * The text of `locator` as the screen lays it out: its characters, and the one before each
 * line break (an element's <wbr> adds none).
 */
async function lineBreaks(locator) {
  return locator.evaluate((el) => {
    const chars = [];
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (let i = 0; i < n.data.length; i += 1) {
        const range = document.createRange();
        range.setStart(n, i);
        range.setEnd(n, i + 1);
        const rect = range.getClientRects()[0];
        if (rect) chars.push([n.data[i], rect.top]);
      }
    }
    const before = [];
    for (let i = 1; i < chars.length; i += 1) {
      if (chars[i][1] > chars[i - 1][1] + 2) before.push(chars[i - 1][0]);
    }
    return { text: chars.map((c) => c[0]).join(''), before };
  });
}

async function signIn(page, token) {
  await page.goto(`${CONSOLE}/entrar`);
  await page.getByLabel('Token de administrador').fill(token);
  await andWait(page, () => page.getByRole('button', { name: 'Entrar' }).click());
}

const browser = await chromium.launch({
  executablePath: env('CHROMIUM'),
  // The tests run as root in CI, where Chromium's sandbox cannot start; and the machine has
  // no network but loopback, so none of Chromium's own background traffic.
  args: [
    '--no-sandbox',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-quic',
    '--no-first-run',
  ],
});

try {
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, locale: 'pt-BR' });
  const page = await context.newPage();

  await check('the sign-in page loads, in Portuguese, with a labelled password field and its icon', async () => {
    const failed = failedAnswers(page);
    const res = await page.goto(CONSOLE);
    assert.ok(res.ok());
    assert.equal(new URL(page.url()).pathname, '/admin/integracao/entrar', 'not signed in: sent to sign-in');
    assert.equal(await page.getAttribute('html', 'lang'), 'pt-BR');
    assert.equal(await text(page.locator('h1')), 'Entrar');
    assert.equal(await page.getByLabel('Token de administrador').getAttribute('type'), 'password');
    await assertIconServed(page, failed);
    page.removeAllListeners('response');
    await shot(page, 'console-sign-in');
  });

  await check('a token that is not valid is refused with a clear message', async () => {
    await signIn(page, 'abc.def.ghi');
    assert.equal(new URL(page.url()).pathname, '/admin/integracao/entrar');
    assert.match(await flash(page), /O token não é válido/);
    await signIn(page, DISPATCH_TOKEN);
    assert.match(await flash(page), /não é de administrador deste serviço/);
    await signIn(page, 'não é token');
    assert.match(await flash(page), /Isto não é um token/);
  });

  await check("sign-in opens a session (its random id in a cookie, never the token), and lists demo-a's integrations", async () => {
    await signIn(page, ADMIN_A);
    assert.equal(new URL(page.url()).pathname, '/admin/integracao');
    assert.match(await flash(page), /Você entrou como administrador do cliente demo-a/);
    const cookie = (await context.cookies(CONSOLE)).find((c) => c.name === 'console_session');
    assert.ok(cookie, 'a session cookie');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Strict');
    assert.equal(cookie.path, '/admin/integracao');
    assert.equal(cookie.expires, -1, 'dies with the browser session');
    assert.match(cookie.value, /^[A-Za-z0-9_-]{43}$/, 'a random id');
    assert.ok(!page.url().includes(ADMIN_A), 'never in a URL');
    assert.ok(!(await page.content()).includes(ADMIN_A), 'never in a page');
    const insurers = await page.locator('tbody th[scope="row"]').allInnerTexts();
    assert.deepEqual(insurers, ['Porto Seguro', 'Tokio Marine', 'Too Seguros']);
    // The viewer is named with the banner's word; no internal column name is shown.
    assert.match(await text(page.locator('.who')), /Cliente demo-a · administrador/);
    assert.doesNotMatch(await text(page.locator('body')), /operator|is_callback_active/);
    assert.deepEqual(await page.locator('thead th').allInnerTexts(),
      ['Seguradora', 'Ambiente', 'Callback', 'URL do callback', 'Último registro', 'Último callback', 'Pausada', 'Ações']);
    // Each insurer already calls back, though the console registered nothing: the state
    // says so, not "never registered".
    for (const insurer of insurers) {
      const row = integrationRow(page, insurer);
      assert.equal(await text(row.locator('td.flag .badge')), 'Registrado fora do console');
      assert.match(await text(row.locator('td.flag')), /os callbacks chegam, mas este console não registrou nenhum/);
      assert.match(await text(row), /Nenhum feito pelo console/);
      assert.doesNotMatch(await text(row), /Nunca registrado/);
      assert.doesNotMatch(await text(row.locator('td.last-callback')), /Nenhum ainda/);
    }
    // The flash is shown once: a reload no longer has it.
    await page.reload();
    assert.equal(await page.locator('.flash').count(), 0);
  });

  await check("a silent insurer's banner: since when, for how long, what is usual there", async () => {
    const banner = page.locator('.banner[role="alert"]');
    assert.equal(await banner.count(), 1, 'one silent integration');
    const said = await text(banner);
    assert.match(said, new RegExp(`^${SILENT_INSURER} \\(Homologação\\) sem callbacks desde \\d{2}/\\d{2}/\\d{4} \\d{2}:\\d{2}:\\d{2}: há 2 h( \\d+ min)? nenhum callback chega`));
    assert.match(said, /o normal neste dia e horário é não passar de 30 min/);
    assert.match(await text(integrationRow(page, SILENT_INSURER).locator('td.last-callback')), /Em silêncio/);
    for (const insurer of ['Porto Seguro', 'Tokio Marine']) {
      assert.doesNotMatch(await text(integrationRow(page, insurer)), /Em silêncio/);
    }
  });

  await check('keyboard: Tab reaches Register Callback for Porto Seguro, Enter registers it (200)', async () => {
    const target = 'Registrar callback: Porto Seguro, Homologação';
    await page.locator('body').focus();
    let reached = false;
    for (let i = 0; i < 40 && !reached; i += 1) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate((label) => document.activeElement?.getAttribute('aria-label') === label, target);
    }
    assert.ok(reached, 'the button is reachable with Tab');
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
    assert.notEqual(outline, 'none', 'focus is visible');
    await andWait(page, () => page.keyboard.press('Enter'));
    assert.match(await flash(page), /Callback registrado: Porto Seguro \(Homologação\) aceitou o registro \(HTTP 200\)/);
    const porto = integrationRow(page, 'Porto Seguro');
    assert.equal(await text(porto.locator('td.flag .badge')), 'Ativo', 'is_callback_active flipped on screen');
    assert.match(await text(porto.locator('td.flag')), /registrado pelo console em \d{2}\/\d{2}\/\d{4}/);
    assert.match(await text(porto), /Registrado \(HTTP 200\)/);
  });

  await check("a failing insurer's status is shown, and the flag stays off", async () => {
    const tokio = integrationRow(page, 'Tokio Marine');
    await andWait(page, () => tokio.getByRole('button', { name: /Registrar callback/ }).click());
    assert.match(await flash(page), /Tokio Marine \(Homologação\) não concluído\. A seguradora recusou o registro: respondeu HTTP 503 Service Unavailable/);
    assert.equal(await text(tokio.locator('td.flag .badge')), 'Registrado fora do console');
    assert.match(await text(tokio), /Falhou: a seguradora respondeu HTTP 503/);
    assert.equal(await text(integrationRow(page, 'Porto Seguro').locator('td.flag .badge')), 'Ativo');
    await shot(page, 'console-integrations');
  });

  await check('a callback URL too wide for its column wraps after a "/", never inside a word', async () => {
    await page.setViewportSize({ width: 900, height: 768 });
    let wrapped = 0;
    for (const insurer of ['Porto Seguro', 'Tokio Marine', 'Too Seguros']) {
      const url = await lineBreaks(integrationRow(page, insurer).locator('code.url'));
      assert.match(url.text, /^http:\/\/.+\/callback\/demo-a\/(porto|tokio|too)$/, url.text);
      assert.ok(url.before.every((c) => c === '/'), `${url.text} breaks after ${JSON.stringify(url.before)}`);
      wrapped += url.before.length > 0 ? 1 : 0;
    }
    assert.ok(wrapped > 0, 'at 900 px a URL wraps');
    await page.setViewportSize({ width: 1366, height: 768 });
  });

  await check('Pause, then Resume after its preview: Porto Seguro, nothing waiting', async () => {
    await page.goto(CONSOLE);
    let porto = integrationRow(page, 'Porto Seguro');
    assert.equal(await text(porto.locator('td.paused')), 'Não');
    await andWait(page, () => porto.getByRole('button', { name: 'Pausar: Porto Seguro, Homologação' }).click());
    assert.match(await flash(page), /^Porto Seguro \(Homologação\) pausada: os callbacks dela são guardados e respondidos 202 \(adiados\)/);
    porto = integrationRow(page, 'Porto Seguro');
    assert.match(await text(porto.locator('td.paused')), /^Sim desde/);
    await andWait(page, () => porto.getByRole('link', { name: 'Retomar: Porto Seguro, Homologação' }).click());
    assert.equal(await text(page.locator('h1')), 'Retomar Porto Seguro (Homologação)');
    assert.match(await text(page.locator('.preview')), /Nenhum callback adiado: retomar apenas encerra a pausa/);
    assert.match(await text(page.locator('main')), /Nenhum callback adiado\./);
    await andWait(page, () => page.getByRole('button', { name: 'Confirmar: retomar', exact: true }).click());
    assert.match(await flash(page), /^Porto Seguro \(Homologação\) retomada: nenhum callback adiado a aplicar\. A pausa terminou\.$/);
    assert.equal(await text(integrationRow(page, 'Porto Seguro').locator('td.paused')), 'Não');
  });

  await check("Resume's preview lists what each deferred callback would do; nothing moves until it is confirmed", async () => {
    await page.goto(CONSOLE);
    const tokio = integrationRow(page, 'Tokio Marine');
    assert.match(await text(tokio.locator('td.paused')), /^Sim desde/);
    await andWait(page, () => tokio.getByRole('link', { name: 'Retomar: Tokio Marine, Homologação' }).click());
    const preview = page.url();
    assert.match(await text(page.locator('.lead')), /^Prévia: nada foi aplicado ainda\./);
    assert.match(await text(page.locator('.preview')), /Retomar aplicaria 3 callbacks adiados, na ordem em que chegaram \(Processado: 3\), e enviaria 3 e-mails aos locatários\./);
    assert.deepEqual(await rowsAfterFirst(page), [
      `Tokio Marine | ${RESUME_PROPOSAL} | Em análise | Pendente | Processado | Sim`,
      `Tokio Marine | ${RESUME_PROPOSAL} | Pendente | Aprovada | Processado | Sim`,
      'Tokio Marine | 548813 | Em análise | Aprovada | Processado | Sim',
    ]);
    await shot(page, 'console-resume-preview');
    // Looking changed nothing: the proposal is still under analysis, its callbacks deferred.
    await page.goto(`${CONSOLE}/propostas/${RESUME_PROPOSAL}`);
    assert.match(await text(page.locator('.facts')), /Status Em análise/);
    await page.goto(preview);
    await andWait(page, () => page.getByRole('button', { name: 'Confirmar: retomar e aplicar 3 callbacks' }).click());
    assert.match(await flash(page), /^Tokio Marine \(Homologação\) retomada: 3 callbacks aplicados na ordem em que chegaram \(Processado: 3\), 3 e-mails aos locatários\. A pausa terminou\.$/);
    assert.equal(await text(integrationRow(page, 'Tokio Marine').locator('td.paused')), 'Não');
    await page.goto(`${CONSOLE}/propostas/${RESUME_PROPOSAL}`);
    assert.match(await text(page.locator('.facts')), /Status Aprovada/);
  });

  await check('the callback log filters by outcome and insurer', async () => {
    await andWait(page, () => page.getByRole('link', { name: 'Registro de callbacks' }).click());
    assert.equal(await text(page.locator('h1')), 'Registro de callbacks');
    await page.getByLabel('Resultado').selectOption('proposal_not_found');
    await page.getByLabel('Seguradora').selectOption('porto');
    await andWait(page, () => page.getByRole('button', { name: 'Filtrar' }).click());
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('resultado'), 'proposal_not_found');
    assert.equal(url.searchParams.get('seguradora'), 'porto');
    const outcomes = await page.locator('tbody .badge').allInnerTexts();
    assert.ok(outcomes.length >= 1, 'the failed receipt is listed');
    for (const o of outcomes) assert.equal(o.trim(), 'Falhou: proposta não encontrada');
    const row = page.locator(`#callback-${FAILED_RECEIPT}`);
    assert.match(await text(row), new RegExp(`Porto Seguro ${FAILED_PROPOSAL} Falhou: proposta não encontrada`));
    assert.ok(!(await page.content()).includes(OTHER_PROPOSAL), "another tenant's receipt never appears");
    await shot(page, 'console-callback-log');
    await page.getByLabel('Resultado').selectOption('processed');
    await andWait(page, () => page.getByRole('button', { name: 'Filtrar' }).click());
    for (const o of await page.locator('tbody .badge').allInnerTexts()) assert.equal(o.trim(), 'Processado');
    assert.equal(await page.locator(`#callback-${FAILED_RECEIPT}`).count(), 0);
  });

  await check('the raw body is shown escaped and indented', async () => {
    await page.goto(`${CONSOLE}/callbacks?resultado=failed`);
    await andWait(page, () => page.getByRole('link', { name: `Ver corpo do callback nº ${FAILED_RECEIPT}` }).click());
    assert.equal(await text(page.locator('h1')), `Callback nº ${FAILED_RECEIPT}`);
    const body = await page.locator('pre.body').first().innerText();
    assert.match(body, /^\{\n {2}"idProposta": "NOVA-1",\n {2}"situacao": "APROVADA",/, 'indented, keys in arrival order');
    assert.ok(body.includes(FAILED_MARKUP), 'the markup is shown as text');
    assert.equal(await page.locator('main img').count(), 0, 'and never becomes an element');
    assert.match(await text(page.locator('.facts')), /Resposta HTTP à seguradora 404/);
    await shot(page, 'console-raw-body');
  });

  await check("Replay of a failed receipt changes its outcome on screen", async () => {
    await page.goto(`${CONSOLE}/callbacks`);
    const row = page.locator(`#callback-${FAILED_RECEIPT}`);
    assert.match(await text(row.locator('.badge')), /Falhou: proposta não encontrada/);
    await andWait(page, () => row.getByRole('button', { name: `Reprocessar o callback nº ${FAILED_RECEIPT}` }).click());
    assert.match(await flash(page), new RegExp(`Callback nº ${FAILED_RECEIPT} reprocessado: Processado\\. A proposta ${FAILED_PROPOSAL} está aprovada\\.`));
    assert.equal(await text(page.locator(`#callback-${FAILED_RECEIPT} .badge`)), 'Processado');
    assert.equal(await page.locator(`#callback-${FAILED_RECEIPT}`).getByRole('button', { name: /Reprocessar/ }).count(), 0);
  });

  await check('bulk replay: a preview of the filtered callbacks, then the confirmation', async () => {
    await page.goto(`${CONSOLE}/callbacks?resultado=proposal_not_found`);
    await andWait(page, () => page.getByRole('link', { name: 'Reprocessar os callbacks destes filtros…' }).click());
    assert.equal(await text(page.locator('h1')), 'Reprocessar callbacks');
    assert.match(await text(page.locator('.lead')), /^Prévia: nada foi reprocessado ainda\./);
    assert.deepEqual(await rowsAfterFirst(page), [
      `Porto Seguro | ${BULK_PROPOSAL} | Em análise | Aprovada | Processado | Sim`,
    ]);
    assert.match(await text(page.locator('.preview')), /Reprocessar 1 callback \(os mais antigos primeiro\) daria: Processado: 1; e enviaria 1 e-mail ao locatário\./);
    await shot(page, 'console-replay-preview');
    // Still failed in the log until it is confirmed.
    await page.goBack();
    assert.match(await text(page.locator('tbody')), new RegExp(`${BULK_PROPOSAL} Falhou: proposta não encontrada`));
    await andWait(page, () => page.getByRole('link', { name: 'Reprocessar os callbacks destes filtros…' }).click());
    await andWait(page, () => page.getByRole('button', { name: 'Confirmar: reprocessar 1 callback' }).click());
    const url = new URL(page.url());
    assert.equal(url.pathname, '/admin/integracao/callbacks');
    assert.equal(url.searchParams.get('resultado'), 'proposal_not_found', 'back to the same filters');
    assert.match(await flash(page), /^1 callback reprocessado: Processado: 1; 1 e-mail ao locatário\.$/);
    assert.match(await text(page.locator('main')), /Nenhum callback com estes filtros/);
  });

  await check('the proposal page shows status, history, events and emails', async () => {
    await andWait(page, () => page.getByRole('link', { name: 'Propostas' }).click());
    await page.getByLabel('Número da proposta').fill(STORY_PROPOSAL);
    await andWait(page, () => page.getByRole('button', { name: 'Abrir proposta' }).click());
    assert.equal(new URL(page.url()).pathname, `/admin/integracao/propostas/${STORY_PROPOSAL}`);
    assert.equal(await text(page.locator('h1')), `Proposta ${STORY_PROPOSAL}`);
    assert.match(await text(page.locator('.facts')), /Status Aprovada/);
    const history = page.locator('table', { has: page.locator('caption', { hasText: 'Mudanças de status' }) });
    assert.deepEqual(
      (await history.locator('tbody tr').allInnerTexts()).map((r) => r.split('\t').slice(1, 4).join(' ')),
      ['Em análise Pendente Porto Seguro', 'Pendente Aprovada Porto Seguro'],
    );
    const emails = page.locator('table', { has: page.locator('caption', { hasText: 'E-mails' }) });
    const subjects = await emails.locator('tbody tr td:nth-child(2)').allInnerTexts();
    assert.equal(subjects.length, 2);
    assert.match(subjects[0], /pendente/);
    assert.match(subjects[1], /aprovada/);
    for (const d of await emails.locator('.badge').allInnerTexts()) assert.equal(d.trim(), 'Enviado');
    const events = await page.locator('table', { has: page.locator('caption', { hasText: 'Eventos' }) }).locator('tbody tr').count();
    assert.ok(events >= 6, `events listed (${events})`);
    await shot(page, 'console-proposal');
  });

  await check('an email the relay refused for good is sent again with Reenviar', async () => {
    await page.goto(`${CONSOLE}/propostas/${RETRY_PROPOSAL}`);
    const emails = page.locator('table', { has: page.locator('caption', { hasText: 'E-mails' }) });
    const row = () => emails.locator('tbody tr').first();
    assert.equal(await text(row().locator('.badge')), 'Recusado pelo servidor de e-mail');
    assert.match(await text(row()), /não é tentado de novo sozinho/);
    assert.match(await text(row().locator('td.detail')), /^SMTP RCPT TO: permanent error \(550\): 5\.1\.1 .*User unknown$/);
    await shot(page, 'console-email-refused');
    await andWait(page, () => row().getByRole('button', { name: /^Reenviar o e-mail nº \d+$/ }).click());
    assert.match(await flash(page), /de volta à fila: será enviado de novo em instantes, para recusado\.mail-1@demo-a\.example\.com\./);
    assert.equal(new URL(page.url()).pathname, `/admin/integracao/propostas/${RETRY_PROPOSAL}`);
    assert.equal(await emails.getByRole('button', { name: /Reenviar/ }).count(), 0, 'back in the queue: no button');
    // The worker sends it on one of its next rounds (every 200 ms here).
    let delivery = await text(row().locator('.badge'));
    for (let i = 0; i < 100 && delivery !== 'Enviado'; i += 1) {
      await page.waitForTimeout(100);
      await page.reload();
      delivery = await text(row().locator('.badge'));
    }
    assert.equal(delivery, 'Enviado');
    assert.equal(await text(row().locator('td:nth-child(5)')), '2', 'two attempts: refused, then sent');
  });

  await check('a body erased past the retention reads "corpo removido em ..." where the body was', async () => {
    await page.goto(`${CONSOLE}/callbacks/${ERASED_RECEIPT}`);
    assert.match(
      await text(page.locator('.erased')),
      /^Corpo removido em \d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2}, passado o prazo de retenção do cliente \(LGPD\)\./,
    );
    assert.equal(await page.locator('pre.body').count(), 0, 'no body is shown');
    assert.match(await text(page.locator('.facts')), /Resultado Processado/, 'the outcome stays');
    await shot(page, 'console-body-erased');
    await page.goto(`${CONSOLE}/callbacks?proposta=${STORY_PROPOSAL}`);
    assert.match(await text(page.locator(`#callback-${ERASED_RECEIPT}`)), /corpo removido em \d{2}\/\d{2}\/\d{4}/);
  });

  await check("another tenant's proposal, receipt and integration give a page without their data", async () => {
    let res = await page.goto(`${CONSOLE}/propostas/${OTHER_PROPOSAL}`);
    assert.equal(res.status(), 404);
    assert.match(await text(page.locator('main')), new RegExp(`Não há proposta ${OTHER_PROPOSAL} neste cliente`));
    res = await page.goto(`${CONSOLE}/callbacks/${OTHER_RECEIPT}`);
    assert.equal(res.status(), 404);
    assert.ok(!(await page.content()).includes(OTHER_SECRET));
    await page.goto(`${CONSOLE}/callbacks?proposta=${OTHER_PROPOSAL}`);
    assert.match(await text(page.locator('main')), /Nenhum callback com estes filtros/);
    // A register POST for demo-b's integration, as a form of this console would send it.
    const post = await context.request.post(`${CONSOLE}/integracoes/${OTHER_INTEGRATION}/registrar`, {
      headers: { Origin: CALLBACK },
      maxRedirects: 0,
    });
    assert.equal(post.status(), 403);
    assert.match(await post.text(), /pertence a outro cliente/);
  });

  await check('a POST from another site is refused', async () => {
    for (const action of ['integracoes/1/registrar', 'integracoes/1/pausar', 'integracoes/1/retomar', 'callbacks/reprocessar']) {
      // A well-formed form, as an attacking page would send it.
      const post = await context.request.post(`${CONSOLE}/${action}`, {
        headers: { Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' },
        form: { resultado: 'failed' },
        maxRedirects: 0,
      });
      assert.equal(post.status(), 403, action);
      assert.match(await post.text(), /não partiu de uma página deste console/);
    }
  });

  await check('Sair signs out: the cookie is gone and the console asks for a token again', async () => {
    await page.goto(CONSOLE);
    await andWait(page, () => page.getByRole('button', { name: 'Sair' }).click());
    assert.equal(new URL(page.url()).pathname, '/admin/integracao/entrar');
    assert.match(await flash(page), /Você saiu do console/);
    assert.equal((await context.cookies(CONSOLE)).filter((c) => c.name === 'console_session').length, 0);
    await page.goto(`${CONSOLE}/callbacks`);
    assert.equal(new URL(page.url()).pathname, '/admin/integracao/entrar');
  });

  await check('a cookie naming no session (forged, or a token) goes back to sign-in with the reason', async () => {
    const { hostname } = new URL(CALLBACK);
    for (const value of ['eyJ.forjado.x', 'A'.repeat(43), ADMIN_A]) {
      await context.addCookies([{ name: 'console_session', value, domain: hostname, path: '/admin/integracao', httpOnly: true, sameSite: 'Strict' }]);
      await page.goto(`${CONSOLE}/callbacks`);
      assert.equal(new URL(page.url()).pathname, '/admin/integracao/entrar');
      assert.match(await flash(page), /Sua sessão terminou\. Entre de novo/);
    }
  });

  await check("demo-b's administrator sees demo-b's data and none of demo-a's", async () => {
    await signIn(page, ADMIN_B);
    assert.match(await text(page.locator('.who')), /Cliente demo-b/);
    // demo-b's porto called back (B-SIGILO-7); its tokio never did.
    assert.equal(await text(integrationRow(page, 'Porto Seguro').locator('td.flag .badge')), 'Registrado fora do console');
    assert.equal(await text(integrationRow(page, 'Tokio Marine').locator('td.flag .badge')), 'Não registrado');
    assert.match(await text(integrationRow(page, 'Tokio Marine').locator('td.last-callback')), /Nenhum ainda/);
    await page.goto(`${CONSOLE}/callbacks`);
    const all = await text(page.locator('main'));
    assert.ok(all.includes(OTHER_PROPOSAL));
    assert.ok(!all.includes(FAILED_PROPOSAL) && !all.includes(STORY_PROPOSAL));
    const res = await page.goto(`${CONSOLE}/propostas/${STORY_PROPOSAL}`);
    assert.equal(res.status(), 404);
    await page.goto(CONSOLE);
    await andWait(page, () => page.getByRole('button', { name: 'Sair' }).click());
  });

  for (const [service, base, token, path] of [
    ['proposal-callback', CALLBACK, ADMIN_A, '/admin/integrations'],
    ['dispatch-api', DISPATCH, DISPATCH_TOKEN, '/shared/default-values'],
  ]) {
    await check(`${service} /docs renders offline, and Try it out with a pasted token answers 200`, async () => {
      const docs = await context.newPage();
      const requests = [];
      docs.on('request', (r) => requests.push(r.url()));
      await docs.goto(`${base}/docs`);
      const summary = docs.locator(`.opblock-summary-path[data-path="${path}"]`);
      await summary.waitFor();
      assert.ok((await docs.locator('.opblock').count()) >= 5, 'the route list renders');
      await docs.getByRole('button', { name: /Authorize/ }).first().click();
      // The bearer scheme's form (proposal-callback also declares Basic for /callback/auth).
      const bearer = docs.locator('.modal-ux .auth-container', { hasText: /\(http, Bearer\)/ });
      await bearer.locator('input').fill(token);
      await bearer.getByRole('button', { name: 'Apply credentials' }).click();
      await bearer.getByRole('button', { name: 'Remove authorization' }).waitFor();
      await bearer.getByRole('button', { name: 'Close', exact: true }).click();
      const op = docs.locator('.opblock', { has: summary });
      await summary.click();
      await op.getByRole('button', { name: 'Try it out' }).click();
      await op.getByRole('button', { name: 'Execute' }).click();
      const status = op.locator('.live-responses-table tbody .response-col_status').first();
      await status.waitFor();
      assert.equal((await status.innerText()).trim(), '200');
      await status.scrollIntoViewIfNeeded();
      await shot(docs, `docs-${service}`);
      const outside = requests.filter((u) => !u.startsWith('http://127.0.0.1') && !u.startsWith('data:'));
      assert.deepEqual(outside, [], 'no request leaves 127.0.0.1');
      assert.ok(requests.some((u) => u.endsWith('/openapi.json')));
      await docs.close();
    });
  }
} finally {
  await browser.close();
  console.log(`${passed} passed, ${failed} failed`);
}
