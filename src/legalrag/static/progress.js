// Visible limits and visible waits. limitField: a character counter under a text box, a notice when a paste is
// cut to the limit, and a message for an empty question. Progress: the stages of a long job as they happen,
// the current one with a running clock, and a cancel button.
import {h, t} from '/static/common.js';

// Wire a textarea (its maxlength is the server's limit) to a counter and a notice; returns {check()} which,
// at submit, says whether there is text and shows the empty-input message when there is none. keepEnd: an
// over-long paste keeps its end (a question pasted under its facts is at the end) instead of its start.
export function limitField(box, emptyKey, {keepEnd = false} = {}) {
  const max = Number(box.getAttribute('maxlength')) || 4000;
  const counter = h('span', {class: 'counter small muted', 'aria-live': 'off'});
  const notice = h('p', {class: 'notice small', role: 'status', hidden: true});
  box.after(h('div', {class: 'field-foot'}, notice, counter));
  let shown = null;  // the notice's key and values, re-worded on a language switch
  const say = (key, params) => { shown = key && [key, params]; notice.hidden = !key; notice.textContent = key ? t(key, params) : ''; };
  const count = () => {
    counter.textContent = t('chars', {n: box.value.length, max});
    counter.classList.toggle('full', box.value.length >= max);
  };
  box.addEventListener('input', () => { count(); if (shown && shown[0] !== 'cut') say(null); });
  box.addEventListener('paste', e => {
    const text = (e.clipboardData || window.clipboardData)?.getData('text') ?? '';
    const room = max - (box.value.length - (box.selectionEnd - box.selectionStart));
    if (text.length <= room) { say(null); return; }
    e.preventDefault();  // insert what fits ourselves, so the cut is said rather than silent
    const fit = Math.max(0, room);
    box.setRangeText(keepEnd ? text.slice(text.length - fit) : text.slice(0, fit), box.selectionStart,
                     box.selectionEnd, 'end');
    count();
    say(keepEnd ? 'cut_start' : 'cut', {n: text.length, max, cut: text.length - fit});
  });
  count();
  return {
    check() {
      if (box.value.trim()) return true;
      say(emptyKey);
      box.focus();
      return false;
    },
    clear() { say(null); count(); },
    relabel() { count(); if (shown) say(...shown); },
  };
}

// A live list of stages: add(key, params) closes the running stage (with its time) and starts a new one;
// the running stage shows its clock, and the whole job its elapsed time. finish() stops the clock.
export class Progress {
  constructor(where, onCancel) {
    this.t0 = performance.now();
    this.list = h('ol', {class: 'progress-steps'});
    this.clock = h('span', {class: 'clock', 'aria-hidden': 'true'});
    this.cancel = h('button', {type: 'button', class: 'cancel', 'data-i18n': 'cancel'}, t('cancel'));
    this.cancel.addEventListener('click', () => onCancel && onCancel());
    this.view = h('div', {class: 'progress card', role: 'status', 'aria-live': 'polite'},
      h('div', {class: 'progress-head'}, h('span', {class: 'spinner', 'aria-hidden': 'true'}), this.clock,
        h('span', {class: 'grow'}), this.cancel), this.list);
    this.items = [];
    this.current = null;
    where.replaceChildren(this.view);
    this.timer = setInterval(() => this.tick(), 250);
    this.tick();
  }

  elapsed() { return (performance.now() - this.t0) / 1000; }

  tick() {
    this.clock.textContent = t('elapsed', {s: this.elapsed().toFixed(1)});
    if (this.current) this.current.time.textContent = t('elapsed', {s: (this.elapsed() - this.current.start).toFixed(1)});
  }

  // Close the running stage; start `key` (with `detail`, a node or text shown under it, e.g. a query).
  add(key, params = {}, detail = null, done = false) {
    if (this.current) this.current.li.classList.replace('running', 'done');
    const time = h('span', {class: 'muted small time'});
    const words = h('span', {class: 'what'}, t(key, params));
    const li = h('li', {class: done ? 'done' : 'running', dataset: {stage: key}}, words, ' ', time,
      detail ? h('div', {class: 'detail small'}, detail) : null);
    this.items.push({key, params, words});
    this.list.append(li);
    this.current = done ? null : {li, time, start: this.elapsed()};
    if (done) time.textContent = '';
    this.tick();
    return li;
  }

  relabel() {
    for (const item of this.items) item.words.textContent = t(item.key, item.params);
    this.cancel.textContent = t('cancel');
    this.tick();
  }

  // done: the job ended with its result (a last 'done' line); otherwise it stopped where it was.
  finish(done = false) {
    clearInterval(this.timer);
    if (this.current) this.current.li.classList.replace('running', 'done');
    this.current = null;
    if (done) this.add('st_done', {s: this.elapsed().toFixed(1)}, null, true);
    this.cancel.hidden = true;
    this.view.classList.add('finished');
    this.tick();
  }
}
