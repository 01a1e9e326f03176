// The drafting page: facts in, the judgment from /draft/stream (the drafter of `legalrag judgment draft`: the
// structure model decides, the LLM writes the reasoning) with each stage shown as it starts (the judgment
// decided, its statutes, the model writing) and a running clock; then shown section by section with its
// statute citations checked against the corpus and clickable inside the text.
import {$, h, t, initFrame, loadCapabilities, postStream, showError, citationList, hitList, linkedSection,
  showBanner, bannerError} from '/static/common.js';
import {limitField, Progress} from '/static/progress.js';

let controller = null, limit = null, progress = null, shown = null;

function sectionLabel(name) {
  const known = t('section_' + name);
  return known === 'section_' + name ? name : known;
}

function render() {
  if (!shown) return;
  $('#sections').replaceChildren(...Object.entries(shown.sections).filter(([, text]) => text && text.trim())
    .map(([name, text]) => h('section', {class: 'draft-section'}, h('h3', {}, sectionLabel(name)),
      h('div', {class: 'draft-text', translate: 'no'}, linkedSection(text.trim(), shown.citations)))));
  $('#draft-cits').replaceChildren(citationList(shown.citations));
  $('#laws').replaceChildren(hitList(shown.laws, []));
  $('#result').hidden = false;
}

async function draft(event) {
  event.preventDefault();
  if (controller || !limit.check()) return;
  const facts = $('#facts').value.trim();
  const status = $('#status');
  status.replaceChildren();
  $('#result').hidden = true;
  $('#stream-section').hidden = true;
  const live = document.createTextNode('');
  $('#stream').replaceChildren(live);
  controller = new AbortController();
  progress = new Progress($('#progress'), () => controller && controller.abort());
  progress.add('st_started');
  $('#draft').disabled = true;
  let writing = false;
  shown = null;
  try {
    shown = await postStream('/draft/stream', {facts}, {
      queued: d => progress.add('st_queued', {n: d.position}),
      stage: d => {
        if (d.stage === 'laws') progress.add(d.decided ? 'st_laws_decided' : 'st_laws', {n: d.hits.length},
          h('span', {translate: 'no'}, d.hits.map(x => x.citation || x.title).join('；')), true);
        else progress.add('st_' + d.stage);
      },
      token: d => {
        if (!writing) { writing = true; progress.add('st_first_text'); $('#stream-section').hidden = false; }
        live.appendData(d.text);
      },
    }, controller.signal);
    $('#stream-section').hidden = true;
    render();
  } catch (err) {
    if (err.name === 'AbortError') status.replaceChildren(h('p', {class: 'muted'}, t('stopped')));
    else showError(status, err);
  } finally {
    progress.finish(Boolean(shown));
    controller = null;
    $('#draft').disabled = false;
  }
}

async function load() {
  try {
    const caps = await loadCapabilities();
    $('#draft').disabled = !caps.features.draft;
    if (!caps.features.draft) showBanner('no_model');
  } catch (err) {
    bannerError(err);
  }
}

function init() {
  initFrame({onLanguage: () => { limit.relabel(); if (progress) progress.relabel(); render(); }, onKey: load});
  limit = limitField($('#facts'), 'empty_facts');
  $('#draft-form').addEventListener('submit', draft);
  load();
}

init();
