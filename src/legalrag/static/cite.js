// The citation-prediction page: facts in, /cite out: each predicted provision with its score and the pipeline
// stages that proposed it; corrections that name no corpus provision are listed as unresolved.
import {$, h, t, initFrame, loadCapabilities, postJSON, showError, openDocument} from '/static/common.js';

function row(p) {
  const open = h('button', {type: 'button', class: 'link'}, p.citation || p.title || p.id);
  open.addEventListener('click', () => openDocument(p.id, open));
  return h('tr', {class: p.resolved ? '' : 'bad'},
    h('td', {}, open, p.resolved ? null : h('span', {class: 'flag small'}, ` ⚠ ${t('unresolved')}`)),
    h('td', {class: 'num'}, Number(p.score).toFixed(3)),
    h('td', {}, p.provenance.map(v => h('span', {class: 'chip', title: v.detail || ''},
      `${v.stage} ${Number(v.score).toFixed(2)}`))));
}

async function predict(event) {
  event.preventDefault();
  const facts = $('#facts').value.trim();
  if (!facts) return;
  const status = $('#status');
  status.replaceChildren(h('p', {class: 'muted'}, t('working')));
  $('#predict').disabled = true;
  try {
    const out = await postJSON('/cite', {facts});
    status.replaceChildren(h('p', {class: 'muted small'}, `${out.seconds} ${t('seconds')}`));
    $('#rows').replaceChildren(...out.provisions.map(row));
    if (!out.provisions.length) $('#rows').append(h('tr', {}, h('td', {colspan: 3}, t('no_predictions'))));
    $('#unresolved').replaceChildren(...(out.unresolved.length ? [h('h3', {}, t('unresolved_corrections')),
      h('ul', {}, out.unresolved.map(u => h('li', {class: 'flag'}, '⚠ ' + u)))] : []));
    $('#result').hidden = false;
  } catch (err) {
    showError(status, err);
  } finally {
    $('#predict').disabled = false;
  }
}

async function init() {
  initFrame();
  $('#cite-form').addEventListener('submit', predict);
  try {
    const caps = await loadCapabilities();
    if (!caps.features.cite) {
      const banner = $('#banner');
      banner.textContent = 'This server has no citation model (start it with --cite-model DIR). / 此服务器没有引用预测模型。';
      banner.hidden = false;
      $('#predict').disabled = true;
    }
  } catch (err) {
    showError($('#status'), err);
  }
}

init();
