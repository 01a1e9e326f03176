// The citation-check page: a pasted text or an uploaded file (.txt, .md, .pdf, .docx) goes to
// POST /citations/check; the text comes back with each citation marked (✓ only when its article supports the
// sentence citing it), the list of citations with the reason for each mark, what the mark means in plain words and
// the clause the support model names (✓: the supporting clause; ?: the closest one and why it is not support), and
// an annotated HTML copy. With a date "as of" (the date the text speaks of), each citation's currency that day
// (current, amended, renumbered, repealed: POST /citations/check's `currency`) is shown beside its support mark.
import {$, h, t, lang, initFrame, postJSON, showError, citationButton, markOf, markText, download, MARK_SYMBOLS}
  from '/static/common.js';
import {articleLabel} from '/static/i18n.js';

// What each mark means, in plain words, shown next to it (citecheck.marks.MEANINGS says the same).
const MEANINGS = {
  en: {supported: 'A clause of this article says what the sentence says; it is quoted below.',
    exists: 'The article exists, but none of its clauses is shown to say what the sentence says: read the closest '
      + 'clause below and decide, or cite another article.',
    not_found: 'There is no such article in the corpus: check the law\u2019s title and the article number.',
    repealed: 'The law was repealed: cite the law in force instead.',
    no_corpus: 'The corpus holds no law of this jurisdiction, so it cannot be checked here.'},
  zh: {supported: '该条有一句话说的正是这句话的内容，见下方引文。',
    exists: '法条存在，但没有一句被认定为说的是这句话的内容：请看下方最接近的一句再判断，或改引其他法条。',
    not_found: '语料中没有这一条：请核对法律名称和条号。',
    repealed: '该法已废止：请改引现行有效的法律。',
    no_corpus: '语料中没有这一法域的法律，无法在此核对。'},
};
const CLAUSE_LABELS = {
  en: {supported: 'Supporting clause', exists: 'Closest clause', why: 'Why it is not taken as support'},
  zh: {supported: '支持这句话的条文', exists: '最接近的条文', why: '为什么不算支持'},
};

function words() { return String(lang).startsWith('zh') ? 'zh' : 'en'; }

// The currency mark beside the support mark (a badge) and what it means, in plain words. The successor law and
// the article's text now are content.
function currencyView(cur) {
  if (!cur) return [];
  const article = cur.new_article ? articleLabel(cur.new_article) : '';
  const params = {date: cur.changed_on || '', from: cur.in_force_from || '', day: cur.as_of, article};
  const badge = h('span', {class: 'badge currency ' + (cur.status === 'current' ? 'ok' : cur.status === 'unknown' ? '' : 'bad')},
    t('cur_badge_' + cur.status, params));
  const said = [t('cur_' + cur.status, params)];
  if (cur.status === 'amended') said.push(' ', article ? t('cur_now', params) : t('cur_gone'));
  if (!cur.dated) said.push(' ', t('cur_undated', params));
  const meaning = h('p', {class: 'currency-meaning small'}, ...said);
  if (cur.status === 'repealed' && cur.successor) meaning.append(' ', t('successor_is', {law: ''}), h('span', {translate: 'no'}, cur.successor));
  if (cur.status === 'amended' && cur.text_now) meaning.append(h('blockquote', {class: 'clause', translate: 'no'}, cur.text_now));
  return [badge, meaning];
}

// One citation: its mark, what the mark means, and the clause the support model names (with why not, for ?).
function citationItem(c, cur) {
  const mark = markOf(c), w = words(), labels = CLAUSE_LABELS[w];
  const [badge, currency] = currencyView(cur);
  const item = h('li', {class: mark === 'supported' ? 'ok' : (c.resolved ? 'exists' : 'bad')},
    citationButton(c, c.canonical && c.canonical.length > c.text.length ? c.canonical : c.text), ' ',
    h('span', {class: 'status' + (mark === 'supported' ? '' : ' flag')}, markText(c)), badge ? ' ' : null, badge,
    h('p', {class: 'mark-meaning small'}, `${MARK_SYMBOLS[mark]} ${MEANINGS[w][mark] || ''}`), currency);
  if (c.clause && (mark === 'supported' || mark === 'exists')) {
    item.append(h('p', {class: 'small muted'}, labels[mark] + ':'),
      h('blockquote', {class: 'clause', translate: 'no'}, c.clause));
    if (mark === 'exists' && c.clause_reason) item.append(h('p', {class: 'small'}, `${labels.why}: ${c.clause_reason}`));
  }
  return item;
}

function citationDetails(citations, currency) {
  if (!citations || !citations.length) return h('p', {class: 'muted small'}, t('no_citations'));
  return h('ul', {class: 'citations'}, citations.map((c, i) => citationItem(c, (currency || [])[i])));
}

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
  $('#list').replaceChildren(citationDetails(out.citations, out.currency));
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
    const asOf = $('#check-as-of').value;
    if (asOf) body.as_of = asOf;
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
