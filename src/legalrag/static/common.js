// Shared by every page: the JSON/SSE client, a DOM builder that only ever sets text (never HTML from data),
// the page frame (language switch, API-key dialog, banner), the article panel and the rendering of checked
// citations. The words are in i18n.js; text from the corpus, the user or the model is marked translate="no".

import {t, lang, setLanguage, applyLanguage, errorText, reasonParts, reasonText} from '/static/i18n.js';

export {t, lang, applyLanguage, errorText} from '/static/i18n.js';

const KEY_STORE = 'legalrag.apiKey';

// ---------------------------------------------------------------- DOM (text only)
// h('div', {class: 'x', onclick: fn}, 'text', child): children that are strings become text nodes.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = value;
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function $(selector) { return document.querySelector(selector); }

// Text with the query's terms wrapped in <mark> (built node by node: the text is never parsed as HTML).
export function highlighted(text, terms) {
  const frag = document.createDocumentFragment();
  const words = (terms || []).filter(w => w && w.length).map(w => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  if (!words.length) { frag.append(text); return frag; }
  const re = new RegExp(words.join('|'), 'gi');
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) frag.append(text.slice(last, m.index));
    frag.append(h('mark', {}, m[0]));
    last = m.index + m[0].length;
  }
  if (last < text.length) frag.append(text.slice(last));
  return frag;
}

// ---------------------------------------------------------------- API client
export class ApiError extends Error {
  constructor(status, type, message, details = {}) {
    super(message);
    this.status = status; this.type = type; this.fields = details.fields || []; this.params = details.params || {};
  }
}

function headers() {
  const out = {'Content-Type': 'application/json', 'Accept': 'application/json, text/event-stream'};
  const key = sessionStorage.getItem(KEY_STORE);
  if (key) out['Authorization'] = 'Bearer ' + key;
  return out;
}

async function failure(r) {
  let type = 'HTTPError', message = `${r.status} ${r.statusText}`, details = {};
  try {
    const body = await r.json();
    if (body && body.error) { type = body.error.type || type; message = body.error.message || message; details = body.error; }
  } catch (_) { /* not JSON: keep the status line */ }
  if (r.status === 401) askForKey();
  return new ApiError(r.status, type, message, details);
}

async function send(path, options) {
  try {
    return await fetch(path, options);
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(0, 'network', err.message);
  }
}

export async function getJSON(path) {
  const r = await send(path, {headers: headers()});
  if (!r.ok) throw await failure(r);
  return r.json();
}

export async function postJSON(path, body, signal) {
  const r = await send(path, {method: 'POST', headers: headers(), body: JSON.stringify(body), signal});
  if (!r.ok) throw await failure(r);
  return r.json();
}

// POST and read server-sent events: handlers[event](data). Resolves with the `done` payload.
export async function postStream(path, body, handlers, signal) {
  const r = await send(path, {method: 'POST', headers: headers(), body: JSON.stringify(body), signal});
  if (!r.ok) throw await failure(r);
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '', result = null;
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, {stream: true});
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const raw = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = 'message', data = '';
      for (const line of raw.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data += line.slice(5).trim();
      }
      const payload = data ? JSON.parse(data) : null;
      if (event === 'error') {
        const e = (payload && payload.error) || {};
        throw new ApiError(500, e.type || 'InternalError', e.message || 'the server reported an error', e);
      }
      if (event === 'done') result = payload;
      if (handlers[event]) handlers[event](payload);
    }
  }
  if (result === null) throw new ApiError(0, 'stream_cut', 'the stream ended without a result');
  return result;
}

// ---------------------------------------------------------------- page frame
let capabilities = null;
export async function loadCapabilities() {
  if (!capabilities) capabilities = await getJSON('/capabilities');
  return capabilities;
}

export function showError(where, err) {
  where.replaceChildren(h('p', {class: 'error', role: 'alert'}, `${t('error')}: ${errorText(err)}`));
}

// The page's banner: a message key (re-worded on a language switch) or an error; hidden by clearBanner().
export function showBanner(key, params, extra = null) {
  const banner = $('#banner');
  if (!banner) return;
  banner.replaceChildren(h('span', {'data-i18n': key}, t(key, params)), ...(extra ? [' ', extra] : []));
  banner.hidden = false;
}

export function bannerError(err) {
  if (err && err.status === 401) return showBanner('key_needed');
  const banner = $('#banner');
  showError(banner, err);
  banner.hidden = false;
}

export function clearBanner() {
  const banner = $('#banner');
  if (banner) { banner.hidden = true; banner.replaceChildren(); }
}

function askForKey() {
  const dialog = $('#key-dialog');
  if (dialog && !dialog.open) dialog.showModal();
}

// onLanguage: re-render what the page shows in the new language; onKey: reload what the page needs once an
// API key is entered (the first load failed with 401 without it).
export function initFrame({onLanguage, onKey} = {}) {
  applyLanguage();
  $('#lang-toggle').addEventListener('click', () => {
    setLanguage(lang === 'zh' ? 'en' : 'zh');
    applyLanguage();
    if (onLanguage) onLanguage();
  });
  const dialog = $('#key-dialog');
  $('#key-button').addEventListener('click', () => dialog.showModal());
  $('#key-form').addEventListener('submit', () => {
    const value = $('#key-input').value.trim();
    if (value) sessionStorage.setItem(KEY_STORE, value); else sessionStorage.removeItem(KEY_STORE);
    capabilities = null;
    clearBanner();
    if (onKey) onKey();
  });
  $('#key-cancel').addEventListener('click', () => dialog.close());
  $('#panel-close').addEventListener('click', closePanel);
  document.addEventListener('keydown', e => { if (e.key === 'Escape') closePanel(); });
  const here = location.pathname;
  for (const a of document.querySelectorAll('nav.site a')) {
    if (a.getAttribute('href') === here) a.setAttribute('aria-current', 'page');
  }
}

// ---------------------------------------------------------------- article panel
let opener = null;

function closePanel() {
  const panel = $('#panel');
  if (!panel.classList.contains('open')) return;
  panel.classList.remove('open');
  if (opener && document.contains(opener)) opener.focus();
}

function showPanel(...content) {
  const panel = $('#panel');
  $('#panel-body').replaceChildren(...content.filter(Boolean));
  panel.classList.add('open');
  $('#panel-heading').focus();
}

export async function openDocument(id, button, status, supported = true) {
  opener = button || document.activeElement;
  showPanel(h('p', {class: 'muted'}, t('panel_loading')));
  try {
    const doc = await getJSON('/documents/' + encodeURIComponent(id));
    showPanel(
      h('h3', {class: 'article-title', translate: 'no'}, doc.citation || doc.title || doc.id),
      status ? h('p', {class: 'badge ' + (supported ? 'ok' : 'exists')}, (supported ? '✓ ' : '? ') + status) : null,
      h('div', {class: 'article-text', id: 'article-text', translate: 'no'}, doc.text),
      h('p', {class: 'muted small'}, `${t('doc_id')} `, h('code', {}, doc.id)));
  } catch (err) {
    showPanel(h('p', {class: 'error'}, errorText(err)));
  }
}

export function openUnresolved(citation, button) {
  opener = button || document.activeElement;
  showPanel(
    h('h3', {class: 'article-title', translate: 'no'}, citation.canonical || citation.text),
    h('p', {class: 'badge bad'}, `${MARK_SYMBOLS[markOf(citation)]} ${t('mark_' + markOf(citation))}`),
    h('p', {class: 'flag-reason'}, citation.mark === 'repealed' || citation.mark === 'no_corpus'
      || citation.mark_reason === 'unknown_format' ? markText(citation) : reasonNodes(citation)));
}

// ---------------------------------------------------------------- citations
function reasonNodes(c) {
  return reasonParts(c).map(p => (typeof p === 'string' ? p : h('span', {translate: 'no'}, p.law)));
}

// The mark of a checked citation: ✓ only for 'supported' (its article supports the sentence citing it).
export const MARK_SYMBOLS = {supported: '✓', exists: '?', not_found: '✗', repealed: '↻', no_corpus: '∅'};

export function markOf(c) {
  return c.mark || (c.resolved ? 'exists' : 'not_found');
}

export function markText(c) {
  const mark = markOf(c);
  const parts = [t('mark_' + mark)];
  if (mark === 'exists' && c.mark_reason) parts.push(t('why_' + c.mark_reason));
  if (mark === 'not_found' && c.mark_reason === 'unknown_format') parts.push(t('why_unknown_format'));
  else if (mark === 'not_found') parts.push(reasonText(c));
  if (mark === 'repealed' && c.successor) parts.push(t('successor_is', {law: c.successor}));
  if (c.support !== null && c.support !== undefined) parts.push(t('support_score', {p: Number(c.support).toFixed(2)}));
  // the currency mark beside the support mark (an answer as of a past day): amended, renumbered, repealed, ...
  const cur = c.currency;
  if (cur && cur.status !== 'current' && cur.status !== 'unknown')
    parts.push(t('cur_badge_' + cur.status, {date: cur.changed_on || '', day: cur.as_of || ''}));
  return parts.filter(Boolean).join(' · ');
}

export function citationButton(c, label) {
  const mark = markOf(c), ok = c.resolved;
  const button = h('button', {type: 'button', class: 'cite ' + (mark === 'supported' ? 'ok' : (ok ? 'exists' : 'bad')),
    title: `${markText(c)}: ${c.canonical || c.text}`, dataset: {doc: c.document_id || '', mark}},
    h('span', {translate: 'no'}, label || c.text), h('span', {class: 'mark', 'aria-label': t('mark_' + mark)}, ' ' + MARK_SYMBOLS[mark]));
  button.addEventListener('click', () => ok ? openDocument(c.document_id, button, markText(c), mark === 'supported')
    : openUnresolved(c, button));
  return button;
}

// The answer text with each citation (as written) turned into a button; the rest stays plain text.
export function linkedText(text, citations) {
  const frag = document.createDocumentFragment();
  let pos = 0;
  for (const c of citations || []) {
    const at = c.text ? text.indexOf(c.text, pos) : -1;
    if (at < 0) continue;
    if (at > pos) frag.append(text.slice(pos, at));
    frag.append(citationButton(c));
    pos = at + c.text.length;
  }
  if (pos < text.length) frag.append(text.slice(pos));
  return frag;
}

// Citations inside a text (a draft's sections): the first occurrence of each as a button, like an answer's.
export function linkedSection(text, citations) {
  const seen = new Set(), found = [];
  for (const c of citations || []) {
    if (!c.text || seen.has(c.text)) continue;
    const at = text.indexOf(c.text);
    if (at >= 0) { seen.add(c.text); found.push([at, c]); }
  }
  found.sort((a, b) => a[0] - b[0]);
  const frag = document.createDocumentFragment();
  let pos = 0;
  for (const [at, c] of found) {
    if (at < pos) continue;
    if (at > pos) frag.append(text.slice(pos, at));
    frag.append(citationButton(c));
    pos = at + c.text.length;
  }
  if (pos < text.length) frag.append(text.slice(pos));
  return frag;
}

export function citationList(citations) {
  if (!citations || !citations.length) return h('p', {class: 'muted small'}, t('no_citations'));
  return h('ul', {class: 'citations'}, citations.map(c => h('li', {class: markOf(c) === 'supported' ? 'ok' : (c.resolved ? 'exists' : 'bad')},
    citationButton(c, c.canonical && c.canonical.length > c.text.length ? c.canonical : c.text), ' ',
    h('span', {class: 'status' + (markOf(c) === 'supported' ? '' : ' flag')}, markText(c)))));
}

export function hitList(hits, terms) {
  return h('ol', {class: 'hits'}, (hits || []).map(hit => {
    const open = h('button', {type: 'button', class: 'link', translate: 'no'}, hit.citation || hit.title || hit.id);
    open.addEventListener('click', () => openDocument(hit.id, open));
    const sources = Object.entries(hit.sources || {});
    return h('li', {class: 'hit'},
      h('div', {class: 'hit-head'}, h('span', {class: 'rank'}, `${hit.rank}.`), open,
        h('span', {class: 'score'}, Number(hit.score).toFixed(3)),
        sources.length ? h('span', {class: 'sources'}, `${t('sources')}: `,
          sources.map(([name, rank]) => h('span', {class: 'chip', translate: 'no'}, `${name} #${rank}`))) : null),
      h('p', {class: 'hit-text', translate: 'no'}, highlighted(hit.text, terms)));
  }));
}

export function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], {type}));
  const a = h('a', {href: url, download: name});
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
