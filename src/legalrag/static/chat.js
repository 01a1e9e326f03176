// The consultation page: multi-turn chat over /consult/stream. The server keeps no state: each request carries
// the earlier turns. Each turn shows its stages as they happen (waiting, searching, the articles found, the model
// reading them, writing) with a clock from the moment of sending; the answer streams token by token and stays
// in view above the input area while it grows (unless the reader scrolls away); once done, every citation
// becomes a button that opens the article beside the chat (or its unresolved flag with the reason).
import {$, h, t, initFrame, loadCapabilities, postStream, showError, linkedText, citationList, MARK_SYMBOLS, markOf, markText,
  hitList, download, showBanner, bannerError} from '/static/common.js';
import {limitField, Progress} from '/static/progress.js';

const turns = [];  // {question, answer, query, citations, retrieved, processor, retriever, model, timings}
let controller = null;
let limit = null;
let forceNext = false;  // the next question is sent with force: the reader chose "ask anyway"

function fillSelect(select, values, label, chosen, code = false) {
  select.replaceChildren(...values.map(v => {
    const option = new Option(label(v), v);
    option.selected = v === chosen;
    if (code) option.setAttribute('translate', 'no');
    return option;
  }));
}

let defaultProcessor = null;  // the server's (GET /capabilities): what a turn uses unless the reader picks another

function processorLabel(p) {
  return p ? t('proc_' + p) : `${t('proc_default')}: ${defaultProcessor ? t('proc_' + defaultProcessor) : ''}`;
}

function history() {
  return turns.flatMap(turn => [{role: 'user', content: turn.question}, {role: 'assistant', content: turn.answer}]);
}

function turnView(question) {
  const status = h('div', {class: 'status small'});
  const text = h('div', {class: 'answer-text', translate: 'no'});
  const cits = h('div', {class: 'answer-citations'});
  const retrieved = h('details', {class: 'retrieved', hidden: true});
  const view = h('article', {class: 'turn'},
    h('div', {class: 'bubble user'}, h('span', {class: 'who'}, t('you')), h('p', {class: 'question', translate: 'no'}, question)),
    h('div', {class: 'bubble assistant'}, h('span', {class: 'who'}, t('assistant')), status, text, cits, retrieved));
  return {view, status, text, cits, retrieved};
}

function showRetrieved(details, query, hits, question) {
  details.hidden = false;
  details.replaceChildren(h('summary', {}, `${t('retrieved')} (${hits.length})`));
  if (query !== question) details.append(h('p', {class: 'muted small'}, `${t('query_used')}: `, h('q', {translate: 'no'}, query)));
  details.append(hitList(hits, []));
}

// Keep the bottom of `el` above the sticky input area (on a phone the composer covers the lower part of the
// screen), as long as the reader follows the answer: a scroll up by hand stops it for this turn.
function follower(el) {
  let follow = true;
  const stop = () => { follow = false; };
  window.addEventListener('wheel', e => { if (e.deltaY < 0) stop(); }, {passive: true});
  window.addEventListener('touchmove', stop, {passive: true});
  return {
    keep() {
      if (!follow) return;
      const limit = $('#ask-form').getBoundingClientRect().top - 8;
      const bottom = el.getBoundingClientRect().bottom;
      if (bottom > limit) window.scrollBy(0, bottom - limit);
    },
    done() { follow = false; },
  };
}

function articleNames(hits) {
  return h('ul', {class: 'stage-articles', translate: 'no'}, ...hits.map(hit => h('li', {}, hit.citation || hit.title || hit.id)));
}

async function ask(event) {
  event.preventDefault();
  const box = $('#question');
  if (controller || !limit.check()) return;
  const question = box.value.trim();
  const conversation = $('#conversation');
  conversation.querySelector('.empty')?.remove();
  const ui = turnView(question);
  conversation.append(ui.view);
  const progress = new Progress(ui.status, () => controller && controller.abort());
  progress.add('st_chat_search');
  const view = follower(ui.view);
  view.keep();
  box.value = '';
  limit.clear();
  // The server's default processor (GET /capabilities) unless the reader picked another: the page has none of its own.
  const body = {question, history: history(), retriever: $('#retriever').value || null, k: Number($('#k').value) || 5};
  if ($('#processor').value) body.processor = $('#processor').value;
  if (forceNext) { body.force = true; forceNext = false; }  // "ask anyway" after a decline
  controller = new AbortController();
  $('#send').disabled = true;
  $('#stop').hidden = false;
  const live = document.createTextNode('');
  ui.text.append(live);
  let writing = false, found = null;
  try {
    const done = await postStream('/consult/stream', body, {
      queued: d => { progress.add('st_queued', {n: d.position}); view.keep(); },
      started: d => { if (d.queue_s >= 0.5) progress.add('st_chat_search'); },
      stage: d => { if (d.stage === 'load_index') progress.add('st_load_index'); },
      retrieved: d => {  // a fused processor searches more than once: the list shows the latest
        if (found) found.querySelector('.detail').replaceChildren(articleNames(d.hits));
        else { found = progress.add('st_chat_articles', {}, articleNames(d.hits)); progress.add('st_chat_read'); }
        showRetrieved(ui.retrieved, d.query, d.hits, question);
        view.keep();
      },
      token: d => {
        if (!writing) { writing = true; progress.add('st_first_text'); }
        live.appendData(d.text);
        view.keep();
      },
    }, controller.signal);
    progress.finish(true);
    showAnswer(ui, done, question);
    view.keep();
    turns.push({question, answer: done.answer, query: done.query, searched: done.searched, carried: done.carried,
      citations: done.citations,
      retrieved: done.retrieved, processor: done.processor || body.processor, retriever: body.retriever, model: done.model,
      timings: done.timings, view: ui});
  } catch (err) {
    progress.finish(false);
    const why = h('p', {class: 'small'});
    ui.status.append(why);
    if (err.name === 'AbortError') why.textContent = t('stopped');
    else showError(why, err);
  } finally {
    view.done();
    controller = null;
    $('#send').disabled = false;
    $('#stop').hidden = true;
    box.focus();
  }
}

// One line per turn: the query searched for it and the earlier turns' articles carried into its results.
function traceLine(done, question) {
  const searched = done.searched?.length ? done.searched : [done.query];
  const line = h('p', {class: 'turn-trace muted small'}, `${t('query_used')}: `, h('q', {translate: 'no'}, searched[0] || question));
  if (done.carried?.length) {
    line.append(' · ', `${t('carried')}: `, h('span', {translate: 'no'}, done.carried.map(c => c.title).join('；')));
  }
  return line;
}

function showAnswer(ui, done, question) {
  // the answer's text opens with its quoted legal basis (法律依据, verbatim); a fallback says it draws no conclusion
  ui.text.replaceChildren(linkedText(done.answer, done.citations));
  ui.view.querySelector('.answer-flags')?.remove();
  const flags = [];
  if (done.fallback) flags.push('无结论：列出最相关的法条和需要核对的事项 / no conclusion: the most relevant articles and what to check');
  if (done.not_from_law?.length) flags.push(`不是出自法条 / not from the law: ${done.not_from_law.join('、')}`);
  if (flags.length) ui.text.before(h('p', {class: 'answer-flags small'}, flags.join(' · ')));
  ui.view.querySelector('.turn-trace')?.remove();
  ui.text.before(traceLine(done, question));
  ui.cits.replaceChildren(h('h3', {class: 'small-head'}, t('citations')), citationList(done.citations));
  if (done.steps?.some(s => s.agent === 'guard' && s.action === 'not_covered')) {
    // declined as outside the corpus: a person who thinks it wrong asks again past the scope decision
    const again = h('button', {type: 'button', class: 'ask-anyway'}, '仍然提问 / Ask anyway');
    again.addEventListener('click', () => {
      const i = turns.findIndex(turn => turn.view === ui);
      if (i >= 0) turns.splice(i, 1);
      ui.view.remove();
      forceNext = true;
      $('#question').value = question;
      $('#ask-form').requestSubmit();
    });
    ui.cits.append(again);
  }
  showRetrieved(ui.retrieved, done.query, done.retrieved, question);
}

// A language switch re-words every finished turn (its chrome: labels, citation states and reasons).
function relabelTurns() {
  for (const turn of turns) {
    const fresh = turnView(turn.question);
    fresh.status.remove();
    showAnswer(fresh, turn, turn.question);
    turn.view.view.replaceWith(fresh.view);
    turn.view = fresh;
  }
}

function markdown() {
  const lines = [`# legalrag consultation`, '', `Exported ${new Date().toISOString()}`, ''];
  turns.forEach((turn, i) => {
    lines.push(`## ${i + 1}. ${turn.question}`, '');
    if (turn.query !== turn.question) lines.push(`*Search query (${turn.processor}):* ${turn.query}`, '');
    if (turn.carried?.length) lines.push(`*Carried from earlier turns:* ${turn.carried.map(c => c.title).join('; ')}`, '');
    lines.push(turn.answer, '', '**Citations**', '');
    if (!turn.citations.length) lines.push('- (none)');
    for (const c of turn.citations) {
      lines.push(`- ${MARK_SYMBOLS[markOf(c)]} ${c.canonical || c.text}${c.document_id ? ` (document ${c.document_id})` : ''}: ${markText(c)}`);
    }
    lines.push('', '**Retrieved articles**', '', ...turn.retrieved.map(r => `${r.rank}. ${r.citation} (${r.id})`), '');
  });
  return lines.join('\n');
}

function exportAs(kind) {
  const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
  if (kind === 'md') download(`consultation-${stamp}.md`, 'text/markdown', markdown());
  else download(`consultation-${stamp}.json`, 'application/json',
    JSON.stringify({exported: new Date().toISOString(), turns: turns.map(({view, ...turn}) => ({...turn,
      retrieved: turn.retrieved.map(({rank, id, citation, score}) => ({rank, id, citation, score}))}))}, null, 2));
}

async function load() {
  try {
    const caps = await loadCapabilities();
    defaultProcessor = caps.default_processor;
    fillSelect($('#processor'), ['', ...caps.processors], processorLabel, '');
    fillSelect($('#retriever'), caps.retrievers, r => r, caps.default_retriever, true);
    $('#k').max = caps.max_k;
    $('#send').disabled = !caps.features.ask;
    if (!caps.features.ask) showBanner('no_model');
  } catch (err) {
    bannerError(err);
  }
}

function init() {
  const relabel = () => {
    for (const option of $('#processor').options) option.textContent = processorLabel(option.value);
    limit.relabel();
    relabelTurns();
  };
  initFrame({onLanguage: relabel, onKey: load});
  limit = limitField($('#question'), 'empty_question', {keepEnd: true});
  if (matchMedia('(min-width: 861px)').matches) $('details.options').open = true;  // folded on phones
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
  load();
}

init();
