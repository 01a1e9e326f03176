// The consultation page: multi-turn chat over /consult/stream. The server keeps no state: each request carries
// the earlier turns. Answers stream token by token; once done, every citation becomes a button that opens the
// article beside the chat (or its unresolved flag with the reason).
import {$, h, t, initFrame, applyLanguage, loadCapabilities, postStream, showError, linkedText, citationList,
  hitList, download} from '/static/common.js';

const turns = [];  // {question, answer, query, citations, retrieved, processor, retriever, model, timings}
let controller = null;

function fillSelect(select, values, label, chosen) {
  select.replaceChildren(...values.map(v => {
    const option = new Option(label(v), v);
    option.selected = v === chosen;
    return option;
  }));
}

function history() {
  return turns.flatMap(turn => [{role: 'user', content: turn.question}, {role: 'assistant', content: turn.answer}]);
}

function turnView(question) {
  const status = h('p', {class: 'status muted small'}, t('working'));
  const text = h('div', {class: 'answer-text'});
  const cits = h('div', {class: 'answer-citations'});
  const retrieved = h('details', {class: 'retrieved', hidden: true});
  const view = h('article', {class: 'turn'},
    h('div', {class: 'bubble user'}, h('span', {class: 'who'}, t('you')), h('p', {class: 'question'}, question)),
    h('div', {class: 'bubble assistant'}, h('span', {class: 'who'}, t('assistant')), status, text, cits, retrieved));
  return {view, status, text, cits, retrieved};
}

function showRetrieved(details, query, hits, question) {
  details.hidden = false;
  details.replaceChildren(h('summary', {}, `${t('retrieved')} (${hits.length})`));
  if (query !== question) details.append(h('p', {class: 'muted small'}, `${t('query_used')}: `, h('q', {}, query)));
  details.append(hitList(hits, []));
}

async function ask(event) {
  event.preventDefault();
  const box = $('#question');
  const question = box.value.trim();
  if (!question || controller) return;
  const conversation = $('#conversation');
  conversation.querySelector('.empty')?.remove();
  const ui = turnView(question);
  conversation.append(ui.view);
  ui.view.scrollIntoView({block: 'end'});
  box.value = '';
  const body = {question, history: history(), processor: $('#processor').value, retriever: $('#retriever').value || null,
    k: Number($('#k').value) || 5};
  controller = new AbortController();
  $('#send').disabled = true;
  $('#stop').hidden = false;
  const live = document.createTextNode('');
  ui.text.append(live);
  try {
    const done = await postStream('/consult/stream', body, {
      queued: d => { ui.status.textContent = `${t('queued')} ${d.position}`; },
      started: () => { ui.status.textContent = t('working'); },
      retrieved: d => showRetrieved(ui.retrieved, d.query, d.hits, question),
      token: d => { live.appendData(d.text); },
    }, controller.signal);
    if (!done) throw new Error('the stream ended without an answer');
    ui.status.remove();
    ui.text.replaceChildren(linkedText(done.answer, done.citations));
    ui.cits.replaceChildren(h('h3', {class: 'small-head'}, t('citations')), citationList(done.citations));
    showRetrieved(ui.retrieved, done.query, done.retrieved, question);
    turns.push({question, answer: done.answer, query: done.query, citations: done.citations,
      retrieved: done.retrieved.map(({rank, id, citation, score}) => ({rank, id, citation, score})),
      processor: body.processor, retriever: body.retriever, model: done.model, timings: done.timings});
  } catch (err) {
    if (err.name === 'AbortError') ui.status.textContent = t('stopped');
    else showError(ui.status, err);
  } finally {
    controller = null;
    $('#send').disabled = false;
    $('#stop').hidden = true;
    box.focus();
  }
}

function markdown() {
  const lines = [`# legalrag consultation`, '', `Exported ${new Date().toISOString()}`, ''];
  turns.forEach((turn, i) => {
    lines.push(`## ${i + 1}. ${turn.question}`, '');
    if (turn.query !== turn.question) lines.push(`*Search query (${turn.processor}):* ${turn.query}`, '');
    lines.push(turn.answer, '', '**Citations**', '');
    if (!turn.citations.length) lines.push('- (none)');
    for (const c of turn.citations) {
      lines.push(c.resolved ? `- ✓ ${c.canonical || c.text} (document ${c.document_id})${c.in_retrieved ? '' : ' - not among the retrieved articles'}`
        : `- ⚠ UNRESOLVED ${c.canonical || c.text}: ${c.note}`);
    }
    lines.push('', '**Retrieved articles**', '', ...turn.retrieved.map(r => `${r.rank}. ${r.citation} (${r.id})`), '');
  });
  return lines.join('\n');
}

function exportAs(kind) {
  const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
  if (kind === 'md') download(`consultation-${stamp}.md`, 'text/markdown', markdown());
  else download(`consultation-${stamp}.json`, 'application/json',
    JSON.stringify({exported: new Date().toISOString(), turns}, null, 2));
}

async function init() {
  const relabel = () => {
    const processor = $('#processor');
    for (const option of processor.options) option.textContent = t('proc_' + option.value);
  };
  initFrame(relabel);
  $('#ask-form').addEventListener('submit', ask);
  $('#question').addEventListener('keydown', e => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); $('#ask-form').requestSubmit(); }
  });
  $('#stop').addEventListener('click', () => controller && controller.abort());
  $('#export-md').addEventListener('click', () => exportAs('md'));
  $('#export-json').addEventListener('click', () => exportAs('json'));
  $('#clear').addEventListener('click', () => {
    turns.length = 0;
    $('#conversation').replaceChildren(h('p', {class: 'muted empty', 'data-i18n': 'chat_empty'}, t('chat_empty')));
  });
  try {
    const caps = await loadCapabilities();
    fillSelect($('#processor'), caps.processors, p => t('proc_' + p), 'last');
    fillSelect($('#retriever'), caps.retrievers, r => r, caps.default_retriever);
    $('#k').max = caps.max_k;
    if (!caps.features.ask) {
      const banner = $('#banner');
      banner.dataset.i18n = 'no_model';
      banner.hidden = false;
      applyLanguage(banner.parentElement);
      $('#send').disabled = true;
    }
  } catch (err) {
    showError($('#banner'), err);
    $('#banner').hidden = false;
  }
}

init();
