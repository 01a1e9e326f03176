// The search page: /search, or /agents/search/stream with the planner (each step drawn as it happens, with a
// running clock and a cancel); law filter, retriever, k; matching terms highlighted, fused hits show which
// retrievers found them; the planner's trajectory drawn as a timeline. The versions panel lists a law's versions
// (GET /law/show) and, given an article, that article across them (GET /law/history), as of a date.
import {$, h, t, initFrame, loadCapabilities, getJSON, postJSON, postStream, showError, hitList, bannerError}
  from '/static/common.js';
import {articleLabel, label, inLanguage} from '/static/i18n.js';
import {limitField, Progress} from '/static/progress.js';

let limit = null, controller = null, progress = null;
let shown = null;  // {result, agents}: re-drawn on a language switch

function code(text) { return h('code', {translate: 'no'}, text); }

function stepView(step) {
  const input = step.input || {}, output = step.output || {};
  const lines = [];
  let title = [label('ag_', step.agent), ' · ', label('ag_', step.action), ' ', code(step.action)];
  if (step.action === 'retrieve') {
    const source = input.source || step.agent;
    title = [t('retrieve_step'), ' · ', source === 'original' ? t('src_original') : label('ag_', source), ' ', code(source)];
    lines.push(h('p', {class: 'step-query'}, h('q', {translate: 'no'}, input.query || '')));
    lines.push(h('p', {class: 'muted small'}, `+${output.new ?? 0} ${t('new_articles')} · ${t('pool')} ${output.pool_size ?? '?'}`));
  } else if (step.action === 'rewrite') {
    title = [label('ag_', step.agent), ' ', code(step.agent)];
    lines.push(h('ul', {class: 'reformulations', translate: 'no'}, (output.queries || []).map(q => h('li', {}, q))));
  } else if (step.agent === 'planner' && input.round !== undefined) {
    title = [t('round_n', {n: input.round}), ' · ', label('ag_', step.action), ' ', code(step.action)];
  } else if (step.agent === 'planner' && output.reason && label('sr_', output.reason) !== output.reason) {
    lines.push(h('p', {class: 'muted small'}, `${t('stop_reason')}: ${label('sr_', output.reason)}`));
  }
  const note = step.agent === 'planner' && input.round !== undefined ? output.reason : '';
  if (note) {  // the model's own words: shown when they are in the interface's language
    lines.push(inLanguage(note) ? h('p', {class: 'reason', translate: 'no'}, note)
      : h('p', {class: 'reason muted small'}, t('reason_not_shown')));
  }
  if (step.error) lines.push(h('p', {class: 'flag small', title: step.error}, `⚠ ${t('step_failed')}`));
  return h('li', {class: 'step ' + (step.action === 'retrieve' ? 'retrieve' : step.agent === 'planner' ? 'plan' : 'agent')},
    h('div', {class: 'step-head'}, h('strong', {}, ...title),
      h('span', {class: 'muted small'}, ` ${t('elapsed', {s: Number(step.seconds || 0).toFixed(2)})}`)), ...lines);
}

// What the planner loop does next, from the step that just ended (the server sends each step when it ends).
function nextStage(step, round) {
  if (step.action === 'retrieve') return ['st_plan', {n: round + 1}];
  if (step.agent === 'planner' && step.input && step.input.round !== undefined && !['exit', 'stop'].includes(step.action))
    return ['st_rewrite', {agent: label('ag_', step.action)}];
  if (step.action === 'rewrite') return ['st_search', {}];
  return ['st_merge', {}];
}

function render() {
  if (!shown) return;
  const {result, agents} = shown;
  $('#status').replaceChildren(h('p', {class: 'muted small'}, code(result.retriever), ' · ', t('hits_n', {n: result.hits.length})));
  $('#results-section').hidden = false;
  $('#results').replaceChildren(result.hits.length ? hitList(result.hits, result.terms)
    : h('p', {class: 'muted'}, t('no_results')));
  $('#timeline-section').hidden = !agents;
  if (agents) {
    const s = result.summary;
    $('#timeline-summary').replaceChildren(`${t('rounds')}: ${s.rounds} · ${t('pool')}: ${s.pool_size} · ` +
      `${t('reformulations')}: ${s.reformulations.length} · ${t('stop_reason')}: ${label('sr_', s.stop_reason)} `,
      code(s.stop_reason));
    $('#timeline').replaceChildren(...result.trajectory.map(stepView));
  }
}

async function agentsSearch(body) {
  controller = new AbortController();
  progress = new Progress($('#progress'), () => controller && controller.abort());
  progress.add('st_started');
  $('#timeline-section').hidden = false;
  $('#timeline-summary').replaceChildren();
  $('#timeline').replaceChildren();
  $('#results-section').hidden = true;
  let round = 0, ok = false;
  try {
    const result = await postStream('/agents/search/stream', body, {
      queued: d => progress.add('st_queued', {n: d.position}),
      started: () => progress.add('st_retrieve_original'),
      step: step => {
        if (step.agent === 'planner' && step.input && step.input.round !== undefined) round = step.input.round;
        $('#timeline').append(stepView(step));
        progress.add(...nextStage(step, round));
      },
    }, controller.signal);
    ok = true;
    return result;
  } finally {
    progress.finish(ok);
    controller = null;
  }
}

async function search(event) {
  event.preventDefault();
  if (controller || !limit.check()) return;
  const query = $('#query').value.trim();
  const agents = $('#agents').checked;
  const body = {query, k: Number($('#k').value) || 10, retriever: $('#retriever').value || null,
    laws: $('#law').value ? [$('#law').value] : []};
  const status = $('#status');
  status.replaceChildren(agents ? '' : h('p', {class: 'muted'}, t('working')));
  $('#progress').replaceChildren();
  progress = null;
  $('#search').disabled = true;
  try {
    const result = agents ? await agentsSearch(body) : await postJSON('/search', body);
    shown = {result, agents};
    render();
  } catch (err) {
    if (err.name === 'AbortError') status.replaceChildren(h('p', {class: 'muted'}, t('stopped')));
    else showError(status, err);
  } finally {
    $('#search').disabled = false;
  }
}

// ---------------------------------------------------------------- versions of a law
let versionsShown = null;  // {law, history}: re-drawn on a language switch

function interval(v) {
  if (!v.in_force_from) return t('versions_unknown_start');
  return v.in_force_until ? t('versions_between', {from: v.in_force_from, until: v.in_force_until})
    : t('versions_from', {from: v.in_force_from});
}

function versionItem(v, asOf) {
  return h('li', {class: v.selected ? 'selected' : ''},
    h('strong', {}, v.version || t('versions_undated')), ' · ', interval(v), ' · ', t('hits_n', {n: v.articles}),
    v.selected ? [' · ', h('span', {class: 'badge ok'}, t('versions_selected', {day: asOf}))] : null,
    v.ended_by ? [' · ', h('span', {class: 'muted small'}, t('versions_ended_' + v.ended_by))] : null);
}

function historyItem(step, i) {  // the oldest version has nothing to be compared with
  const head = [h('strong', {}, step.version || t('versions_undated')), ' · '];
  if (!step.article) return h('li', {}, ...head, h('span', {class: 'muted'}, t('history_none')));
  return h('li', {class: step.changed ? 'changed' : ''}, ...head, articleLabel(step.article),
    i ? [' · ', h('span', {class: step.changed ? 'flag' : 'muted small'}, t(step.changed ? 'history_changed' : 'history_same'))] : null,
    h('blockquote', {class: 'clause', translate: 'no'}, step.text));
}

function renderVersions() {
  if (!versionsShown) return;
  const {law, history} = versionsShown, parts = [h('h3', {translate: 'no'}, law.law)];
  parts.push(h('ol', {id: 'law-versions', class: 'versions'}, law.versions.map(v => versionItem(v, law.as_of))));
  if (law.repealed) parts.push(h('p', {class: 'flag small'}, t('versions_repealed', {on: law.repealed.on || '?'}), ' ',
    h('span', {translate: 'no'}, law.repealed.by)));
  if (law.note) parts.push(h('p', {class: 'muted small', translate: 'no'}, law.note));
  if (history) {
    parts.push(h('h3', {}, t('history_title'), ' ', h('span', {translate: 'no'}, law.law), ' ',
      articleLabel(history.article)));
    parts.push(h('ol', {id: 'article-history', class: 'versions'}, history.versions.map(historyItem)));
  }
  $('#versions').replaceChildren(...parts);
}

async function showVersions(event) {
  event.preventDefault();
  const title = $('#versions-law').value.trim(), status = $('#versions-status');
  let article = $('#versions-article').value.trim();
  if (!title) { status.replaceChildren(h('p', {class: 'error'}, t('versions_need_law'))); return; }
  const digits = article.match(/^(\d+)(?:-(\d+))?$/);  // 47 or 133-1: written as the law writes it
  if (digits) article = `第${digits[1]}条` + (digits[2] ? `之${digits[2]}` : '');
  const asOf = $('#versions-as-of').value;
  const query = params => '?' + new URLSearchParams({...params, ...(asOf ? {as_of: asOf} : {})});
  status.replaceChildren(h('p', {class: 'muted'}, t('working')));
  $('#versions-run').disabled = true;
  try {
    const law = await getJSON('/law/show' + query({title}));
    const history = article ? await getJSON('/law/history' + query({citation: article.startsWith('第') ? title + article : article})) : null;
    versionsShown = {law, history};
    status.replaceChildren();
    renderVersions();
  } catch (err) {
    showError(status, err);
  } finally {
    $('#versions-run').disabled = false;
  }
}

async function load() {
  try {
    const caps = await loadCapabilities();
    $('#retriever').replaceChildren(...caps.retrievers.map(r => {
      const option = new Option(r, r, false, r === caps.default_retriever);
      option.setAttribute('translate', 'no');
      return option;
    }));
    $('#k').max = caps.max_k;
    const agents = $('#agents');
    agents.disabled = !caps.features.agents;
    agents.closest('label').title = caps.features.agents ? '' : t('no_model');
    const laws = await getJSON('/laws');
    $('#law').replaceChildren(h('option', {value: '', 'data-i18n': 'all_laws'}, t('all_laws')),
      ...laws.laws.map(l => h('option', {value: l.title, translate: 'no'}, `${l.title} (${l.articles})`)));
  } catch (err) {
    bannerError(err);
  }
}

function init() {
  initFrame({onLanguage: () => { limit.relabel(); if (progress) progress.relabel(); render(); renderVersions(); },
    onKey: load});
  $('#versions-form').addEventListener('submit', showVersions);
  limit = limitField($('#query'), 'empty_question');
  $('#search-form').addEventListener('submit', search);
  $('#query').addEventListener('keydown', e => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); $('#search-form').requestSubmit(); }
  });
  load();
}

init();
