// The citation-prediction page: facts in, /cite out: each predicted provision with its score and the pipeline
// stages that proposed it; corrections that name no corpus provision are listed as unresolved. When the facts
// fall outside the laws the model was trained on (the server's law-area check), a notice with the score that
// decided it comes first and the predictions are folded away as unreliable.
import {$, h, t, initFrame, loadCapabilities, postJSON, showError, openDocument, showBanner, bannerError}
  from '/static/common.js';
import {label} from '/static/i18n.js';
import {limitField} from '/static/progress.js';

let limit = null, shown = null;

function row(p) {
  const open = h('button', {type: 'button', class: 'link', translate: 'no'}, p.citation || p.title || p.id);
  open.addEventListener('click', () => openDocument(p.id, open));
  return h('tr', {class: p.resolved ? '' : 'bad'},
    h('td', {}, open, p.resolved ? null : h('span', {class: 'flag small'}, ` ⚠ ${t('unresolved')}`)),
    h('td', {class: 'num'}, Number(p.score).toFixed(3)),
    h('td', {}, p.provenance.map(v => h('span', {class: 'chip', title: v.detail || '', dataset: {stage: v.stage}},
      `${label('cs_', v.stage)} ${Number(v.score).toFixed(2)}`))));
}

function laws(list) {
  return h('span', {translate: 'no'}, list.map(x => `《${x.law || x}》`).join('、') || '—');
}

// t() with some values as nodes (law titles stay content, marked translate="no").
function worded(key, params) {
  const parts = t(key, Object.fromEntries(Object.keys(params).map(k => [k, `\u0000${k}\u0000`]))).split('\u0000');
  return parts.map((part, i) => (i % 2 ? params[part] : part));
}

function render() {
  if (!shown) return;
  const out = shown, scope = out.scope;
  $('#status').replaceChildren(h('p', {class: 'muted small'}, t('elapsed', {s: out.seconds})));
  const outside = scope && !scope.in_scope;
  $('#scope').replaceChildren(!scope ? '' : h('p', {class: outside ? 'scope-notice' : 'muted small', role: outside ? 'alert' : null},
    ...(outside ? worded('out_of_scope', {trained: laws(scope.trained_laws.slice(0, 2)), top: laws(scope.top_laws.slice(0, 2)),
      score: scope.score.toFixed(2), threshold: scope.threshold}) : [t('in_scope', {score: scope.score.toFixed(2)})])));
  $('#rows').replaceChildren(...out.provisions.map(row));
  if (!out.provisions.length) $('#rows').append(h('tr', {}, h('td', {colspan: 3}, t('no_predictions'))));
  $('#unresolved').replaceChildren(...(out.unresolved.length ? [h('h3', {}, t('unresolved_corrections')),
    h('ul', {translate: 'no'}, out.unresolved.map(u => h('li', {class: 'flag'}, '⚠ ' + u)))] : []));
  const fold = $('#predictions');
  fold.open = !outside;
  fold.classList.toggle('unreliable', Boolean(outside));
  $('#predictions-summary').textContent = outside ? t('shown_anyway') : t('provisions');
  $('#result').hidden = false;
}

async function predict(event) {
  event.preventDefault();
  if (!limit.check()) return;
  const facts = $('#facts').value.trim();
  const status = $('#status');
  status.replaceChildren(h('p', {class: 'muted'}, t('working')));
  $('#predict').disabled = true;
  try {
    shown = await postJSON('/cite', {facts});
    render();
  } catch (err) {
    showError(status, err);
  } finally {
    $('#predict').disabled = false;
  }
}

async function load() {
  try {
    const caps = await loadCapabilities();
    $('#predict').disabled = !caps.features.cite;
    if (!caps.features.cite) showBanner('no_cite_model', {}, h('code', {}, 'legalrag serve --cite-model-dir DIR'));
  } catch (err) {
    bannerError(err);
  }
}

function init() {
  initFrame({onLanguage: () => { limit.relabel(); render(); }, onKey: load});
  limit = limitField($('#facts'), 'empty_facts');
  $('#cite-form').addEventListener('submit', predict);
  load();
}

init();
