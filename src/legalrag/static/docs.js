// The offline API page: the routes of /openapi.json with their summaries and request fields (no CDN viewer).
import {$, h, initFrame, getJSON, showError} from '/static/common.js';

function resolve(schema, spec) {
  if (schema && schema.$ref) return spec.components.schemas[schema.$ref.split('/').pop()];
  return schema || {};
}

function typeOf(prop, spec) {
  const p = resolve(prop, spec);
  if (p.anyOf) return p.anyOf.map(x => typeOf(x, spec)).join(' | ');
  if (p.enum) return p.enum.join(' | ');
  if (p.type === 'array') return typeOf(p.items, spec) + '[]';
  const limits = ['minimum', 'maximum', 'minLength', 'maxLength', 'maxItems'].filter(k => p[k] !== undefined)
    .map(k => `${k} ${p[k]}`);
  return (p.type || p.title || 'object') + (limits.length ? ` (${limits.join(', ')})` : '');
}

function bodyTable(op, spec) {
  const content = op.requestBody && op.requestBody.content && op.requestBody.content['application/json'];
  if (!content) return null;
  const schema = resolve(content.schema, spec);
  const required = new Set(schema.required || []);
  return h('table', {class: 'fields'}, h('tbody', {}, Object.entries(schema.properties || {}).map(([name, prop]) =>
    h('tr', {}, h('td', {}, h('code', {}, name + (required.has(name) ? ' *' : ''))), h('td', {}, typeOf(prop, spec)),
      h('td', {class: 'muted'}, resolve(prop, spec).description || prop.description || '')))));
}

async function init() {
  initFrame();
  try {
    const spec = await getJSON('/openapi.json');
    const items = [];
    for (const [path, ops] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        items.push(h('section', {class: 'card route'},
          h('h2', {}, h('span', {class: 'method ' + method}, method.toUpperCase()), ' ', h('code', {}, path)),
          h('p', {}, op.summary || ''), bodyTable(op, spec),
          h('p', {class: 'muted small'}, 'responses: ' + Object.keys(op.responses || {}).join(', '))));
      }
    }
    $('#routes').replaceChildren(...items);
  } catch (err) {
    showError($('#routes'), err);
  }
}

init();
