// The search page: /search (or /agents/search with the planner), law filter, retriever, k; matching terms
// highlighted, fused hits show which retrievers found them; the planner's trajectory drawn as a timeline.
import {$, h, t, initFrame, applyLanguage, loadCapabilities, getJSON, postJSON, showError, hitList}
  from '/static/common.js';

let caps = null;

function stepView(step) {
  const input = step.input || {}, output = step.output || {};
  const lines = [];
  let title = `${step.agent} · ${step.action}`;
  if (step.action === 'retrieve') {
    title = `${t('retrieve_step')} · ${input.source || step.agent}`;
    lines.push(h('p', {class: 'step-query'}, h('q', {}, input.query || '')));
    lines.push(h('p', {class: 'muted small'}, `+${output.new ?? 0} ${t('new_articles')} · ${t('pool')} ${output.pool_size ?? '?'}`));
  } else if (step.action === 'rewrite') {
    lines.push(h('ul', {class: 'reformulations'}, (output.queries || []).map(q => h('li', {}, q))));
  } else if (step.agent === 'planner' && input.round !== undefined) {
    title = `${t('round_n').replace('{n}', input.round)} · ${step.action}`;
    if (output.reason) lines.push(h('p', {class: 'reason'}, output.reason));
  } else if (step.agent === 'planner' && (output.reason || output.handling)) {
    lines.push(h('p', {class: 'reason'}, output.reason || output.handling));
  }
  if (step.error) lines.push(h('p', {class: 'flag small'}, '⚠ ' + step.error));
  return h('li', {class: 'step ' + (step.action === 'retrieve' ? 'retrieve' : step.agent === 'planner' ? 'plan' : 'agent')},
    h('div', {class: 'step-head'}, h('strong', {}, title),
      h('span', {class: 'muted small'}, ` ${Number(step.seconds || 0).toFixed(2)} ${t('seconds')}`)), ...lines);
}

async function search(event) {
  event.preventDefault();
  const query = $('#query').value.trim();
  if (!query) return;
  const agents = $('#agents').checked;
  const body = {query, k: Number($('#k').value) || 10, retriever: $('#retriever').value || null,
    laws: $('#law').value ? [$('#law').value] : []};
  const status = $('#status');
  status.replaceChildren(h('p', {class: 'muted'}, t('working')));
  $('#search').disabled = true;
  try {
    const result = await postJSON(agents ? '/agents/search' : '/search', body);
    status.replaceChildren(h('p', {class: 'muted small'}, `${result.retriever} · ${result.hits.length}`));
    $('#results-section').hidden = false;
    $('#results').replaceChildren(result.hits.length ? hitList(result.hits, result.terms)
      : h('p', {class: 'muted'}, t('no_results')));
    const section = $('#timeline-section');
    section.hidden = !agents;
    if (agents) {
      const s = result.summary;
      $('#timeline-summary').textContent = `${t('rounds')}: ${s.rounds} · ${t('pool')}: ${s.pool_size} · ` +
        `${t('reformulations')}: ${s.reformulations.length} · ${t('stop_reason')}: ${s.stop_reason}`;
      $('#timeline').replaceChildren(...result.trajectory.map(stepView));
    }
  } catch (err) {
    showError(status, err);
  } finally {
    $('#search').disabled = false;
  }
}

async function init() {
  initFrame();
  $('#search-form').addEventListener('submit', search);
  $('#query').addEventListener('keydown', e => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); $('#search-form').requestSubmit(); }
  });
  try {
    caps = await loadCapabilities();
    $('#retriever').replaceChildren(...caps.retrievers.map(r => new Option(r, r, false, r === caps.default_retriever)));
    $('#k').max = caps.max_k;
    const agents = $('#agents');
    agents.disabled = !caps.features.agents;
    if (!caps.features.agents) agents.closest('label').title = t('no_model');
    const laws = await getJSON('/laws');
    $('#law').append(...laws.laws.map(l => new Option(`${l.title} (${l.articles})`, l.title)));
    applyLanguage($('#law'));
  } catch (err) {
    showError($('#status'), err);
  }
}

init();
