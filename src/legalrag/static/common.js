// Shared by every page: the JSON/SSE client, a DOM builder that only ever sets text (never HTML from data),
// the zh/en strings, the article panel and the rendering of checked citations.

const KEY_STORE = 'legalrag.apiKey';
const LANG_STORE = 'legalrag.lang';

// ---------------------------------------------------------------- text (zh / en)
const STRINGS = {
  en: {
    brand: 'legalrag', nav_chat: 'Consultation', nav_search: 'Search', nav_draft: 'Judgment draft',
    nav_cite: 'Citation prediction', nav_api: 'API', lang_switch: '中文', skip: 'Skip to content',
    key_title: 'API key', key_help: 'This server needs an API key. It is kept in this tab only.',
    key_save: 'Use key', key_cancel: 'Cancel', key_button: 'API key',
    panel_title: 'Article', panel_close: 'Close', panel_empty: 'Click a citation to read the article here.',
    panel_unresolved: 'Not found in the corpus', panel_loading: 'Loading…',
    checked: 'checked', unresolved: 'unresolved', not_retrieved: 'in the corpus, not among the retrieved articles',
    citations: 'Citations', no_citations: 'The answer cites no article.', retrieved: 'Retrieved articles',
    query_used: 'Search query', working: 'Working…', queued: 'Waiting for the model, position', stop: 'Stop',
    stopped: 'Stopped.', error: 'Error', no_model: 'No language model on this server: answers, drafts and the agents are unavailable; search and citation checks still work.',
    chat_title: 'Consultation', chat_placeholder: 'Ask a legal question, e.g. 公司不签劳动合同，我能要求双倍工资吗？',
    send: 'Ask', processor: 'Conversation processor', retriever: 'Retriever', k: 'Articles (k)',
    export_md: 'Export Markdown', export_json: 'Export JSON', clear: 'New consultation', you: 'You', assistant: 'legalrag',
    proc_last: 'last question', proc_all_questions: 'all questions', proc_full_context: 'full context', proc_rewrite: 'LLM rewrite',
    chat_empty: 'Ask a question. Each answer cites articles; click a citation to read it beside the chat. Checked citations are marked ✓, unresolved ones ⚠ with the reason.',
    search_title: 'Search the statutes', search_placeholder: 'Words, a question or the facts of a case', search: 'Search',
    law: 'Law', all_laws: 'All laws', agents: 'Agents (planner rewrites the query)', results: 'Results',
    no_results: 'No article matched.', sources: 'found by', timeline: 'Agents timeline', round: 'round',
    pool: 'pool', new_articles: 'new', round_n: 'Round {n}', rounds: 'rounds', retrieve_step: 'Retrieval', reformulations: 'reformulations', stop_reason: 'stopped because',
    draft_title: 'Draft a judgment', facts: 'Facts of the case', facts_placeholder: 'Paste the facts found by the court…',
    draft: 'Draft', draft_streaming: 'Draft (as generated)', sections: 'Sections', statutes_cited: 'Statute citations',
    laws_retrieved: 'Statutes retrieved for the facts',
    cite_title: 'Predict the cited provisions', predict: 'Predict', provisions: 'Predicted provisions',
    provision: 'Provision', score: 'Score', stages: 'Proposed by', unresolved_corrections: 'Corrections not in the corpus',
    no_predictions: 'No provision predicted.', seconds: 's',
    section_heading: 'Heading', section_facts: 'Facts', section_reasoning: 'Reasoning', section_result: 'Judgment', section_appendix: 'Closing',
    docs_title: 'API routes', docs_intro: 'Every page uses these JSON routes. The machine-readable schema is at',
  },
  zh: {
    brand: 'legalrag', nav_chat: '法律咨询', nav_search: '法条检索', nav_draft: '判决书起草',
    nav_cite: '引用预测', nav_api: '接口', lang_switch: 'English', skip: '跳到正文',
    key_title: 'API 密钥', key_help: '此服务器需要 API 密钥，仅保存在当前标签页。',
    key_save: '使用密钥', key_cancel: '取消', key_button: 'API 密钥',
    panel_title: '法条', panel_close: '关闭', panel_empty: '点击引用即可在此阅读法条原文。',
    panel_unresolved: '语料中未找到', panel_loading: '加载中…',
    checked: '已核验', unresolved: '未核验', not_retrieved: '在语料中，但不在检索到的法条中',
    citations: '引用', no_citations: '回答没有引用法条。', retrieved: '检索到的法条',
    query_used: '检索查询', working: '处理中…', queued: '排队等待模型，位置', stop: '停止',
    stopped: '已停止。', error: '错误', no_model: '此服务器没有语言模型：回答、起草和智能体不可用；检索和引用核验仍可使用。',
    chat_title: '法律咨询', chat_placeholder: '请输入法律问题，例如：公司不签劳动合同，我能要求双倍工资吗？',
    send: '提问', processor: '对话处理方式', retriever: '检索器', k: '法条数 (k)',
    export_md: '导出 Markdown', export_json: '导出 JSON', clear: '新的咨询', you: '您', assistant: 'legalrag',
    proc_last: '仅最后一问', proc_all_questions: '所有问题', proc_full_context: '完整上下文', proc_rewrite: '模型改写',
    chat_empty: '请提问。每个回答都会引用法条；点击引用可在右侧阅读原文。已核验的引用标 ✓，未核验的标 ⚠ 并说明原因。',
    search_title: '检索法条', search_placeholder: '关键词、问题或案件事实', search: '检索',
    law: '法律', all_laws: '全部法律', agents: '智能体（规划器改写查询）', results: '结果',
    no_results: '没有匹配的法条。', sources: '来源', timeline: '智能体时间线', round: '轮',
    pool: '候选池', new_articles: '新增', round_n: '第 {n} 轮', rounds: '轮数', retrieve_step: '检索', reformulations: '改写查询', stop_reason: '结束原因',
    draft_title: '起草判决书', facts: '案件事实', facts_placeholder: '粘贴法院查明的事实……',
    draft: '起草', draft_streaming: '草稿（生成中）', sections: '各部分', statutes_cited: '法条引用',
    laws_retrieved: '根据事实检索到的法条',
    cite_title: '预测应引用的法条', predict: '预测', provisions: '预测的法条',
    provision: '法条', score: '得分', stages: '提出阶段', unresolved_corrections: '语料中不存在的更正',
    no_predictions: '没有预测到法条。', seconds: '秒',
    section_heading: '首部', section_facts: '事实', section_reasoning: '理由', section_result: '判决结果', section_appendix: '尾部',
    docs_title: '接口列表', docs_intro: '每个页面都使用这些 JSON 接口。机器可读的模式见',
  },
};

export let lang = (() => {
  const stored = localStorage.getItem(LANG_STORE);
  if (stored === 'zh' || stored === 'en') return stored;
  return (navigator.language || 'zh').toLowerCase().startsWith('zh') ? 'zh' : 'en';
})();

export function t(key) {
  return (STRINGS[lang] && STRINGS[lang][key]) || STRINGS.en[key] || key;
}

export function applyLanguage(root = document) {
  document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-placeholder]')) el.placeholder = t(el.dataset.i18nPlaceholder);
  for (const el of root.querySelectorAll('[data-i18n-label]')) el.setAttribute('aria-label', t(el.dataset.i18nLabel));
}

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
  constructor(status, type, message) { super(message); this.status = status; this.type = type; }
}

function headers() {
  const out = {'Content-Type': 'application/json', 'Accept': 'application/json, text/event-stream'};
  const key = sessionStorage.getItem(KEY_STORE);
  if (key) out['Authorization'] = 'Bearer ' + key;
  return out;
}

async function failure(r) {
  let type = 'HTTPError', message = `${r.status} ${r.statusText}`;
  try {
    const body = await r.json();
    if (body && body.error) { type = body.error.type || type; message = body.error.message || message; }
  } catch (_) { /* not JSON: keep the status line */ }
  if (r.status === 401) askForKey();
  return new ApiError(r.status, type, message);
}

export async function getJSON(path) {
  const r = await fetch(path, {headers: headers()});
  if (!r.ok) throw await failure(r);
  return r.json();
}

export async function postJSON(path, body, signal) {
  const r = await fetch(path, {method: 'POST', headers: headers(), body: JSON.stringify(body), signal});
  if (!r.ok) throw await failure(r);
  return r.json();
}

// POST and read server-sent events: handlers[event](data). Resolves with the `done` payload.
export async function postStream(path, body, handlers, signal) {
  const r = await fetch(path, {method: 'POST', headers: headers(), body: JSON.stringify(body), signal});
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
        throw new ApiError(500, e.type || 'Error', e.message || 'the server reported an error');
      }
      if (event === 'done') result = payload;
      if (handlers[event]) handlers[event](payload);
    }
  }
  return result;
}

// ---------------------------------------------------------------- page frame
let capabilities = null;
export async function loadCapabilities() {
  if (!capabilities) capabilities = await getJSON('/capabilities');
  return capabilities;
}

export function showError(where, err) {
  where.replaceChildren(h('p', {class: 'error', role: 'alert'}, `${t('error')}: ${err.message || err}`));
}

function askForKey() {
  const dialog = $('#key-dialog');
  if (dialog && !dialog.open) dialog.showModal();
}

export function initFrame(onLanguage) {
  applyLanguage();
  const toggle = $('#lang-toggle');
  toggle.addEventListener('click', () => {
    lang = lang === 'zh' ? 'en' : 'zh';
    localStorage.setItem(LANG_STORE, lang);
    applyLanguage();
    if (onLanguage) onLanguage();
  });
  const dialog = $('#key-dialog');
  $('#key-button').addEventListener('click', () => dialog.showModal());
  $('#key-form').addEventListener('submit', () => {
    const value = $('#key-input').value.trim();
    if (value) sessionStorage.setItem(KEY_STORE, value); else sessionStorage.removeItem(KEY_STORE);
    capabilities = null;
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

export async function openDocument(id, button, status) {
  opener = button || document.activeElement;
  showPanel(h('p', {class: 'muted'}, t('panel_loading')));
  try {
    const doc = await getJSON('/documents/' + encodeURIComponent(id));
    showPanel(
      h('h3', {class: 'article-title'}, doc.citation || doc.title || doc.id),
      status ? h('p', {class: 'badge ok'}, '✓ ' + status) : null,
      h('div', {class: 'article-text', id: 'article-text'}, doc.text),
      h('p', {class: 'muted small'}, `id ${doc.id}`));
  } catch (err) {
    showPanel(h('p', {class: 'error'}, err.message));
  }
}

export function openUnresolved(citation, button) {
  opener = button || document.activeElement;
  showPanel(
    h('h3', {class: 'article-title'}, citation.canonical || citation.text),
    h('p', {class: 'badge bad'}, '⚠ ' + t('panel_unresolved')),
    h('p', {class: 'flag-reason'}, citation.note || ''));
}

// ---------------------------------------------------------------- citations
function citationButton(c, label) {
  const ok = c.resolved;
  const button = h('button', {type: 'button', class: 'cite ' + (ok ? 'ok' : 'bad'),
    title: ok ? `${t('checked')}: ${c.canonical || c.text}` : `${t('unresolved')}: ${c.note}`,
    dataset: {doc: c.document_id || ''}},
    label || c.text, h('span', {class: 'mark', 'aria-label': ok ? t('checked') : t('unresolved')}, ok ? ' ✓' : ' ⚠'));
  button.addEventListener('click', () => ok ? openDocument(c.document_id, button, t('checked')) : openUnresolved(c, button));
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

export function citationList(citations) {
  if (!citations || !citations.length) return h('p', {class: 'muted small'}, t('no_citations'));
  return h('ul', {class: 'citations'}, citations.map(c => h('li', {class: c.resolved ? 'ok' : 'bad'},
    citationButton(c, c.canonical && c.canonical.length > c.text.length ? c.canonical : c.text), ' ',
    c.resolved
      ? h('span', {class: 'status'}, t('checked') + (c.in_retrieved ? '' : ` · ${t('not_retrieved')}`))
      : h('span', {class: 'status flag'}, `${t('unresolved')}: ${c.note || ''}`))));
}

export function hitList(hits, terms) {
  return h('ol', {class: 'hits'}, (hits || []).map(hit => {
    const open = h('button', {type: 'button', class: 'link'}, hit.citation || hit.title || hit.id);
    open.addEventListener('click', () => openDocument(hit.id, open));
    const sources = Object.entries(hit.sources || {});
    return h('li', {class: 'hit'},
      h('div', {class: 'hit-head'}, h('span', {class: 'rank'}, `${hit.rank}.`), open,
        h('span', {class: 'score'}, Number(hit.score).toFixed(3)),
        sources.length ? h('span', {class: 'sources'}, `${t('sources')}: `,
          sources.map(([name, rank]) => h('span', {class: 'chip'}, `${name} #${rank}`))) : null),
      h('p', {class: 'hit-text'}, highlighted(hit.text, terms)));
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
