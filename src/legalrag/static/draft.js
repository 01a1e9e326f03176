// The drafting page: facts in, the judgment streamed from /draft/stream, then shown section by section (whatever
// sections the drafter returns) with its statute citations checked against the corpus.
import {$, h, t, initFrame, applyLanguage, loadCapabilities, postStream, showError, citationList, hitList}
  from '/static/common.js';

let controller = null;

function sectionLabel(name) {
  const known = t('section_' + name);
  return known === 'section_' + name ? name : known;
}

async function draft(event) {
  event.preventDefault();
  const facts = $('#facts').value.trim();
  if (!facts || controller) return;
  const status = $('#status');
  status.replaceChildren(h('p', {class: 'muted'}, t('working')));
  $('#result').hidden = true;
  $('#stream-section').hidden = false;
  const live = document.createTextNode('');
  $('#stream').replaceChildren(live);
  controller = new AbortController();
  $('#draft').disabled = true;
  $('#stop').hidden = false;
  try {
    const done = await postStream('/draft/stream', {facts}, {
      queued: d => status.replaceChildren(h('p', {class: 'muted'}, `${t('queued')} ${d.position}`)),
      started: () => status.replaceChildren(h('p', {class: 'muted'}, t('working'))),
      token: d => live.appendData(d.text),
    }, controller.signal);
    if (!done) throw new Error('the stream ended without a draft');
    status.replaceChildren();
    $('#stream-section').hidden = true;
    $('#sections').replaceChildren(...Object.entries(done.sections).filter(([, text]) => text && text.trim())
      .map(([name, text]) => h('section', {class: 'draft-section'}, h('h3', {}, sectionLabel(name)),
        h('div', {class: 'draft-text'}, text.trim()))));
    $('#draft-cits').replaceChildren(citationList(done.citations));
    $('#laws').replaceChildren(hitList(done.laws, []));
    $('#result').hidden = false;
  } catch (err) {
    if (err.name === 'AbortError') status.replaceChildren(h('p', {class: 'muted'}, t('stopped')));
    else showError(status, err);
  } finally {
    controller = null;
    $('#draft').disabled = false;
    $('#stop').hidden = true;
  }
}

async function init() {
  initFrame();
  $('#draft-form').addEventListener('submit', draft);
  $('#stop').addEventListener('click', () => controller && controller.abort());
  try {
    const caps = await loadCapabilities();
    if (!caps.features.draft) {
      const banner = $('#banner');
      banner.dataset.i18n = 'no_model';
      banner.hidden = false;
      applyLanguage(banner.parentElement);
      $('#draft').disabled = true;
    }
  } catch (err) {
    showError($('#status'), err);
  }
}

init();
