// The citation-check page: a pasted text or an uploaded file (.txt, .md, .pdf, .docx) goes to
// POST /citations/check; the text comes back with each citation marked (✓ only when its article supports the
// sentence citing it), the list of citations with the reason for each mark, and an annotated HTML copy.
import {$, h, t, initFrame, postJSON, showError, citationList, citationButton, download} from '/static/common.js';

const MAX_BYTES = 5 * 1024 * 1024;
let shown = null;

function annotated(text, citations) {
  const frag = document.createDocumentFragment();
  let pos = 0;
  for (const c of citations) {
    if (c.start < pos) continue;  // citations sharing one span (第一、三款) are listed below
    frag.append(text.slice(pos, c.start), citationButton(c, text.slice(c.start, c.end)));
    pos = c.end;
  }
  frag.append(text.slice(pos));
  return frag;
}

function render() {
  if (!shown) return;
  const {out, text} = shown, s = out.summary;
  $('#summary').textContent = s.no_citations ? t('no_citations_checked') : t('check_summary', {n: s.citations,
    supported: s.supported, exists: s.exists, not_found: s.not_found, repealed: s.repealed, no_corpus: s.no_corpus});
  $('#annotated').replaceChildren(text !== null ? annotated(text, out.citations) : '');
  $('#list').replaceChildren(citationList(out.citations));
  $('#result').hidden = false;
}

function readBase64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(',', 2)[1] || '');
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

async function run(event) {
  event.preventDefault();
  const status = $('#status'), file = $('#check-file').files[0];
  const pasted = $('#check-text').value;
  if (!file && !pasted.trim()) { status.replaceChildren(h('p', {class: 'error'}, t('check_placeholder'))); return; }
  if (file && file.size > MAX_BYTES) {
    status.replaceChildren(h('p', {class: 'error', role: 'alert'}, `${file.name}: > 5 MB`));
    return;
  }
  status.replaceChildren(h('p', {class: 'muted'}, t('working')));
  $('#check-run').disabled = true;
  try {
    const body = file ? {file: await readBase64(file), filename: file.name, annotate: 'html'}
      : {text: pasted, annotate: 'html'};
    const out = await postJSON('/citations/check', body);
    shown = {out, text: file ? null : pasted};
    status.replaceChildren(h('p', {class: 'muted small'}, t('elapsed', {s: out.seconds})));
    render();
    if (file) $('#annotated').innerHTML = new DOMParser().parseFromString(out.annotated, 'text/html')
      .querySelector('pre').outerHTML;  // the server's escaped, highlighted copy of the file's text
  } catch (err) {
    showError(status, err);
  } finally {
    $('#check-run').disabled = false;
  }
}

function init() {
  initFrame({onLanguage: render});
  $('#check-form').addEventListener('submit', run);
  $('#export').addEventListener('click', () => shown && download('checked.html', 'text/html', shown.out.annotated));
}

init();
