// The offline API page: the routes of /openapi.json with their summaries and request fields (no CDN viewer).
// Paths, methods, field names and types are codes and stay as they are; summaries are worded in the
// interface's language (the schema's own English in the English interface).
import {$, h, t, lang, initFrame, getJSON, showError} from '/static/common.js';

const ZH = {
  'get /health': '存活检查（无需 API 密钥）', 'get /index': '索引包含的内容', 'get /capabilities': '此服务器能做什么（页面读取它）',
  'get /laws': '语料中的法律名称（用于法律筛选）', 'get /documents/{doc_id}': '一份语料文档（法条全文）',
  'post /search': '按查询排序的法条，可限定法律', 'post /citations/check': '核验文本中的每个引用',
  'post /agents/search': '由规划器的改写智能体检索，返回全过程', 'post /agents/search/stream': '/agents/search，每一步发生时即推送',
  'post /ask': '根据检索到的法条作答并核验引用', 'post /ask/stream': '/ask，逐字推送',
  'post /consult': '一轮咨询：传入历史，返回带核验引用的回答', 'post /consult/stream': '/consult，逐字推送',
  'post /chat': '一轮咨询：传入历史，返回带核验引用的回答', 'post /chat/stream': '/chat，逐字推送',
  'post /draft': '根据事实起草判决书并核验法条引用', 'post /draft/stream': '/draft，逐阶段、逐字推送',
  'post /judgment/structure': '预测的判决结构（罪名、法条、刑期、罚金、缓刑）及其依据', 'post /cite': '为事实预测应引用的法条，并给出提出各法条的阶段',
};

let spec = null;

function code(text) { return h('code', {}, text); }

function resolve(schema) {
  if (schema && schema.$ref) return spec.components.schemas[schema.$ref.split('/').pop()];
  return schema || {};
}

function typeOf(prop) {
  const p = resolve(prop);
  if (p.anyOf) return p.anyOf.map(typeOf).join(' | ');
  if (p.enum) return p.enum.join(' | ');
  if (p.type === 'array') return typeOf(p.items) + '[]';
  const limits = ['minimum', 'maximum', 'minLength', 'maxLength', 'maxItems'].filter(k => p[k] !== undefined)
    .map(k => `${k} ${p[k]}`);
  return (p.type || p.title || 'object') + (limits.length ? ` (${limits.join(', ')})` : '');
}

function bodyTable(op) {
  const content = op.requestBody && op.requestBody.content && op.requestBody.content['application/json'];
  if (!content) return null;
  const schema = resolve(content.schema);
  const required = new Set(schema.required || []);
  return h('div', {class: 'table-wrap'}, h('table', {class: 'fields'}, h('tbody', {},
    Object.entries(schema.properties || {}).map(([name, prop]) =>
      h('tr', {}, h('td', {}, h('code', {}, name + (required.has(name) ? ' *' : ''))), h('td', {}, h('code', {}, typeOf(prop))),
        lang === 'en' ? h('td', {class: 'muted'}, resolve(prop).description || prop.description || '') : null)))));
}

function render() {
  if (!spec) return;
  const items = [];
  for (const [path, ops] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const summary = lang === 'en' ? op.summary : ZH[`${method} ${path}`];
      items.push(h('section', {class: 'card route'},
        h('h2', {}, h('span', {class: 'method ' + method, translate: 'no'}, method.toUpperCase()), ' ', h('code', {}, path)),
        summary ? h('p', {}, ...(summary.startsWith('/') ? [code(summary.split('，')[0]), '，' + summary.split('，').slice(1).join('，')]
          : [summary])) : null, bodyTable(op),
        h('p', {class: 'muted small'}, `${t('responses')}: `, h('code', {}, Object.keys(op.responses || {}).join(', ')))));
    }
  }
  $('#routes').replaceChildren(...items);
}

async function load() {
  try {
    spec = await getJSON('/openapi.json');
    render();
  } catch (err) {
    showError($('#routes'), err);
  }
}

initFrame({onLanguage: render, onKey: load});
load();
