// The interface's two languages. Every message a page shows comes from here: the server sends codes (error
// types and fields, citation reasons, stage and agent names) and the page words them in the chosen language.
// Text from the corpus, the user or the model is content: it is shown as it is, marked translate="no".

const LANG_STORE = 'legalrag.lang';

const STRINGS = {
  en: {
    mark_supported: 'supported by this article', mark_exists: 'exists, not shown to support this sentence',
    mark_not_found: 'not found', mark_repealed: 'repealed', mark_no_corpus: 'no corpus for this jurisdiction',
    why_not_retrieved: 'not among the retrieved articles', why_does_not_bear: 'its text does not bear on the claim',
    why_no_claim: 'no claim to check it against', why_unknown_format: 'a citation format the checker does not know',
    successor_is: 'now: {law}', claim_is: 'checked against', support_score: 'support {p}',
    no_citations_checked: 'The text cites no article: nothing in it is shown to be supported.',
    nav_check: 'Check citations', check_title: 'Check the citations of a text', check_text: 'Text',
    check_placeholder: 'Paste a draft, an answer or an article…', check_file: 'or a file (.txt, .md, .pdf, .docx; at most 5 MB)',
    check_run: 'Check', check_summary: '{n} citations: {supported} supported, {exists} exist but not shown to support their sentence, {not_found} not found, {repealed} repealed, {no_corpus} of another jurisdiction',
    check_legend: '✓ supported · ? exists, not shown to support · ✗ not found · ↻ repealed · ∅ no corpus for this jurisdiction',
    export_annotated: 'Download annotated HTML',
    as_of: 'As of', as_of_help: 'As of: the date the text speaks of. Each citation is then also marked current, amended, renumbered or repealed since that day.',
    article_n: 'article {n}', article_n_sub: 'article {n}-{m}',
    cur_badge_current: 'current', cur_badge_amended: 'amended {date}', cur_badge_renumbered: 'renumbered {date}',
    cur_badge_repealed: 'repealed', cur_badge_unknown: 'currency unknown', cur_badge_not_in_force: 'not yet in force',
    cur_current: 'The article read as of {day} says the same in the version in force today.',
    cur_amended: 'Amended since {day}: the version of {date} (in force from {from}) changed this article.',
    cur_renumbered: 'The same text is now {article} (the version of {date}, in force from {from}).',
    cur_repealed: 'The law was repealed: it is no longer in force.',
    cur_not_in_force: 'The law was not yet in force on {day}: it took effect on {from}.',
    cur_unknown: 'The versions held do not cover this article, so its currency is not known.',
    cur_now: 'It is now {article}; it now reads:', cur_gone: 'The version in force has no counterpart of it.',
    cur_undated: 'No date was given: read as of today ({day}).',
    versions_title: 'Versions of a law', versions_article: 'Article (optional)', versions_show: 'Show versions',
    versions_law_placeholder: 'the law’s title', versions_article_placeholder: 'article number, e.g. 47',
    versions_need_law: 'Give the law’s title.', versions_undated: 'undated',
    versions_from: 'in force from {from}', versions_between: 'in force from {from} until {until}',
    versions_unknown_start: 'effective date unknown', versions_selected: 'in force on {day}',
    versions_ended_superseded: 'superseded', versions_ended_repealed: 'repealed', versions_repealed: 'Repealed on {on} by',
    history_title: 'Across the versions:', history_none: 'no counterpart in this version',
    history_changed: 'changed', history_same: 'unchanged',
    nav_chat: 'Consultation', nav_search: 'Search', nav_draft: 'Judgment draft',
    nav_cite: 'Citation prediction', nav_api: 'API', lang_switch: '中文', skip: 'Skip to content',
    key_title: 'API key', key_help: 'This server needs an API key. It is kept in this tab only.',
    key_save: 'Use key', key_cancel: 'Cancel', key_button: 'API key', key_needed: 'This server needs an API key: enter it in the dialog (button “API key” at the top).',
    panel_title: 'Article', panel_close: 'Close', panel_empty: 'Click a citation to read the article here.',
    panel_unresolved: 'Not found in the corpus', panel_loading: 'Loading…', doc_id: 'document',
    checked: 'checked', unresolved: 'unresolved', not_retrieved: 'in the corpus, not among the retrieved articles',
    citations: 'Citations', no_citations: 'The answer cites no article.', retrieved: 'Retrieved articles',
    query_used: 'Search query', carried: 'Carried from earlier turns', working: 'Working…', queued: 'Waiting for the model, position', stop: 'Stop',
    stopped: 'Stopped.', error: 'Error', no_model: 'No language model on this server: answers, drafts and the agents are unavailable; search and citation checks still work.',
    legal_notice: 'Not legal advice; consult a lawyer for your case.',
    chat_title: 'Consultation', chat_placeholder: 'Ask a legal question, e.g. My employer never signed a labour contract with me: can I claim double wages?',
    send: 'Ask', processor: 'Conversation processor', retriever: 'Retriever', k: 'Articles (k)', options: 'Options',
    export_md: 'Export Markdown', export_json: 'Export JSON', clear: 'New consultation', you: 'You', assistant: 'legalrag',
    proc_last: 'last question', proc_all_questions: 'all questions', proc_full_context: 'full context', proc_rewrite: 'LLM rewrite', proc_fused: 'earlier turns fused', proc_carry: 'earlier turns fused, their articles carried', proc_auto: 'carried for a short follow-up, else fused', proc_default: 'server default',
    chat_empty: 'Ask a question. Each answer cites articles; click a citation to read it beside the chat. A citation is marked ✓ only when its article supports the sentence citing it; ? when the article exists but is not shown to support it, ✗ when it is not found, ↻ when the law was repealed, each with the reason.',
    search_title: 'Search the statutes', search_placeholder: 'Words, a question or the facts of a case', search: 'Search',
    law: 'Law', all_laws: 'All laws', agents: 'Agents (the planner rewrites the query)', results: 'Results',
    no_results: 'No article matched.', sources: 'found by', timeline: 'Agents timeline', hits_n: '{n} articles',
    pool: 'pool', new_articles: 'new', round_n: 'Round {n}', rounds: 'rounds', retrieve_step: 'Retrieval', reformulations: 'reformulations', stop_reason: 'stopped because',
    draft_title: 'Draft a judgment', facts: 'Facts of the case', facts_placeholder: 'Paste the facts found by the court…',
    draft: 'Draft', draft_streaming: 'Draft (as generated)', sections: 'Sections', statutes_cited: 'Statute citations',
    laws_retrieved: 'Statutes retrieved for the facts',
    cite_title: 'Predict the cited provisions', predict: 'Predict', provisions: 'Predicted provisions',
    provision: 'Provision', score: 'Score', stages: 'Proposed by', unresolved_corrections: 'Corrections not in the corpus',
    no_predictions: 'No provision predicted.', seconds: 's', no_cite_model: 'This server has no citation model, so citation prediction is unavailable. To offer it, start the server with',
    out_of_scope: 'Outside what this model was trained on. It learned from decisions citing {trained}; these facts point to {top} (scope score {score}, needed {threshold}). Its predictions below are unreliable.',
    in_scope: 'Within the model\u2019s training scope (scope score {score}).', shown_anyway: 'Predictions anyway (unreliable)',
    section_heading: 'Heading', section_facts: 'Facts', section_reasoning: 'Reasoning', section_result: 'Judgment', section_appendix: 'Closing',
    docs_title: 'API routes', docs_intro: 'Every page uses these JSON routes. The machine-readable schema is at', responses: 'responses',
    chars: '{n} / {max} characters', cut_start: 'The pasted text had {n} characters; its last {max} were kept (where the question is) and its first {cut} were cut. Shorten it or split it.', cut: 'The pasted text had {n} characters; only the first {max} were kept (the limit). Shorten it or split it.',
    empty_question: 'Type a question first (it cannot be empty or only spaces).', empty_facts: 'Paste the facts of the case first (they cannot be empty or only spaces).',
    elapsed: '{s} s', now: 'Now', cancel: 'Cancel',
    nf_title: 'Page not found', nf_text: 'There is no page at this address.', nf_home: 'Go to the consultation',
    // progress stages
    st_started: 'Started', st_chat_search: 'Searching the articles', st_chat_articles: 'Articles found', st_chat_read: 'The model reads the articles and the question', st_load_index: 'Opening the index', st_queued: 'Waiting for the model (position {n})', st_retrieve_laws: 'Retrieving the statutes for the facts', st_predict: 'Deciding the judgment from the facts (charges, articles, sentence)', st_retrieve_original: 'Searching with your query', st_laws: '{n} statutes retrieved', st_laws_decided: '{n} statutes apply (decided by the structure model)',
    st_generate: 'Writing the judgment (the model reads the prompt first)', st_first_text: 'Writing', st_plan: 'The planner chooses round {n}',
    st_rewrite: 'Agent {agent} rewrites the query', st_search: 'Searching with the new queries', st_merge: 'Merging the results', st_done: 'Done in {s} s',
    // agents and stop reasons
    ag_single_element: 'single element', ag_supplementary_element: 'supplementary element', ag_multi_element: 'multiple elements',
    ag_supportive_law: 'supporting law', ag_semantic_abnormality: 'semantic anomaly', ag_exit: 'finish', ag_stop: 'stop', ag_language: 'language',
    ag_retriever: 'retrieval', ag_planner: 'planner', src_original: 'original query',
    sr_max_rounds: 'the round limit was reached', sr_planner_exit: 'the planner finished', sr_coverage: 'a round found few new articles', sr_agents_exhausted: 'every agent was used',
    reason_not_shown: 'The planner\u2019s note is in another language.', step_failed: 'this step failed',
    // citation-prediction stages
    cs_retrieval: 'retrieval', cs_rerank: 'rerank', 'cs_always-add': 'always cited', cs_clusters: 'clusters', 'cs_co-citation': 'co-citation', 'cs_similar-cases': 'similar cases', cs_verification: 'verification',
    // reasons a citation did not resolve
    rs_no_law: 'no law title is given for this article', rs_unknown_law: 'the law “{law}” is not in the corpus',
    rs_ambiguous_law: 'the law title fits several laws in the corpus', rs_unknown_article: 'the corpus has no such article',
    rs_unknown_paragraph: 'the article exists, the cited paragraph or item does not', rs_not_held: 'a local or foreign law the corpus does not hold',
    rs_ambiguous_article: 'several different documents claim this article', rs_injection: 'asked for by text hidden in a source (removed)',
    rs_other: 'not found in the corpus',
    // errors by code
    e_Unauthorized: 'This server needs an API key, and the key was missing or wrong. Enter it with the “API key” button.',
    e_RateLimited: 'Too many requests: retry in {retry_after} s.', e_TooLarge: 'The request is too large for this server.',
    e_UnsupportedMediaType: 'The request was not sent as JSON.', e_MalformedJSON: 'The request was not valid JSON.',
    e_InvalidRequest: 'Some input was not accepted: {fields}.', e_InputError: 'Some input was not accepted{fields}.',
    e_NotFound: 'Not found.', e_MethodNotAllowed: 'This action is not available here.',
    e_NoModel: 'This server has no model for this: it was started without one.', e_Busy: 'The model is busy ({waiting} requests waiting); try again in a moment.',
    e_LLMUnavailable: 'The language model is unavailable right now; try again later.', e_InternalError: 'The server failed; its log has the details.',
    e_network: 'The server could not be reached.', e_stream_cut: 'The connection ended before the result arrived.',
    f_question: 'question', f_query: 'query', f_facts: 'facts', f_k: 'number of articles', f_processor: 'conversation processor',
    f_retriever: 'retriever', f_laws: 'law filter', f_history: 'earlier turns', f_max_tokens: 'answer length', f_evidence_tokens: 'evidence budget',
    f_title: 'law title', f_citation: 'article', f_as_of: 'date',
    v_string_too_long: '{field} is too long (at most {max_length} characters)', v_string_too_short: '{field} is empty',
    v_missing: '{field} is missing', v_enum: '{field} has a value that is not offered', v_other: '{field} was not accepted',
  },
  zh: {
    mark_supported: '该条支持这句话', mark_exists: '法条存在，但未显示支持这句话',
    mark_not_found: '未找到', mark_repealed: '已废止', mark_no_corpus: '没有这一法域的语料',
    why_not_retrieved: '不在检索到的法条中', why_does_not_bear: '条文与这句话的内容无关',
    why_no_claim: '没有可核对的论断', why_unknown_format: '无法识别的引用格式',
    successor_is: '现行：{law}', claim_is: '核对的论断', support_score: '支持度 {p}',
    no_citations_checked: '文本没有引用任何法条：其中没有内容被显示为有法条支持。',
    nav_check: '引用核查', check_title: '核查文本中的法条引用', check_text: '文本',
    check_placeholder: '粘贴文书、回答或文章……', check_file: '或上传文件（.txt、.md、.pdf、.docx，最大 5 MB）',
    check_run: '核查', check_summary: '共 {n} 处引用：{supported} 处有支持，{exists} 处法条存在但未显示支持，{not_found} 处未找到，{repealed} 处已废止，{no_corpus} 处属其他法域',
    check_legend: '✓ 有支持 · ? 存在但未显示支持 · ✗ 未找到 · ↻ 已废止 · ∅ 无此法域语料',
    as_of: '所指日期', as_of_help: '所指日期：文本所说的是哪一天的法律。填写后，每处引用还会标出自那天以来是现行、已修改、条号变动还是已废止。',
    article_n: '第{n}条', article_n_sub: '第{n}条之{m}',
    cur_badge_current: '现行', cur_badge_amended: '{date} 修改', cur_badge_renumbered: '{date} 条号变动',
    cur_badge_repealed: '已废止', cur_badge_unknown: '时效不明', cur_badge_not_in_force: '尚未施行',
    cur_current: '按 {day} 理解的这一条，与现行版本的内容相同。',
    cur_amended: '{day} 之后已修改：{date} 的版本（自 {from} 起施行）修改了这一条。',
    cur_renumbered: '内容未变，现为{article}（{date} 的版本，自 {from} 起施行）。',
    cur_repealed: '该法已废止，不再有效。',
    cur_not_in_force: '{day} 时该法尚未施行：自 {from} 起施行。',
    cur_unknown: '所存的版本未涵盖这一条，无法判断其时效。',
    cur_now: '现为{article}，现行条文：', cur_gone: '现行版本中没有与之对应的条文。',
    cur_undated: '未给出日期：按今天（{day}）判断。',
    versions_title: '法律的版本', versions_article: '条文（可选）', versions_show: '查看版本',
    versions_law_placeholder: '法律名称，如 公司法', versions_article_placeholder: '条号，如 第四十七条 或 47',
    versions_need_law: '请填写法律名称。', versions_undated: '日期不明',
    versions_from: '自 {from} 起施行', versions_between: '自 {from} 起施行，至 {until} 止',
    versions_unknown_start: '施行日期不明', versions_selected: '{day} 有效',
    versions_ended_superseded: '已被新版本取代', versions_ended_repealed: '已废止', versions_repealed: '废止于 {on}，由',
    history_title: '各版本中的这一条：', history_none: '此版本中没有对应条文',
    history_changed: '有修改', history_same: '未修改',
    export_annotated: '下载标注后的 HTML',
    nav_chat: '法律咨询', nav_search: '法条检索', nav_draft: '判决书起草',
    nav_cite: '引用预测', nav_api: '接口', lang_switch: 'English', skip: '跳到正文',
    key_title: 'API 密钥', key_help: '此服务器需要 API 密钥，仅保存在当前标签页。',
    key_save: '使用密钥', key_cancel: '取消', key_button: 'API 密钥', key_needed: '此服务器需要 API 密钥：请在弹出的对话框中输入（页面顶部的“API 密钥”按钮）。',
    panel_title: '法条', panel_close: '关闭', panel_empty: '点击引用即可在此阅读法条原文。',
    panel_unresolved: '语料中未找到', panel_loading: '加载中…', doc_id: '文档编号',
    checked: '已核验', unresolved: '未核验', not_retrieved: '在语料中，但不在检索到的法条中',
    citations: '引用', no_citations: '回答没有引用法条。', retrieved: '检索到的法条',
    query_used: '检索查询', carried: '沿用前文法条', working: '处理中…', queued: '排队等待模型，位置', stop: '停止',
    stopped: '已停止。', error: '错误', no_model: '此服务器没有语言模型：回答、起草和智能体不可用；检索和引用核验仍可使用。',
    legal_notice: '仅供参考，不构成法律意见；具体案件请咨询律师。',
    chat_title: '法律咨询', chat_placeholder: '请输入法律问题，例如：公司不签劳动合同，我能要求双倍工资吗？',
    send: '提问', processor: '对话处理方式', retriever: '检索器', k: '法条数', options: '选项',
    export_md: '导出 Markdown', export_json: '导出 JSON', clear: '新的咨询', you: '您', assistant: '助手',
    proc_last: '仅最后一问', proc_all_questions: '所有问题', proc_full_context: '完整上下文', proc_rewrite: '模型改写', proc_fused: '融合前几轮', proc_carry: '融合前几轮并沿用其法条', proc_auto: '简短追问沿用法条，否则融合', proc_default: '服务器默认',
    chat_empty: '请提问。每个回答都会引用法条；点击引用可在旁边阅读原文。只有法条内容支持引用它的那句话时才标 ✓；法条存在但未显示支持标 ?，未找到标 ✗，已废止标 ↻，并说明原因。',
    search_title: '检索法条', search_placeholder: '关键词、问题或案件事实', search: '检索',
    law: '法律', all_laws: '全部法律', agents: '智能体（规划器改写查询）', results: '结果',
    no_results: '没有匹配的法条。', sources: '来源', timeline: '智能体时间线', hits_n: '{n} 条',
    pool: '候选池', new_articles: '新增', round_n: '第 {n} 轮', rounds: '轮数', retrieve_step: '检索', reformulations: '改写查询', stop_reason: '结束原因',
    draft_title: '起草判决书', facts: '案件事实', facts_placeholder: '粘贴法院查明的事实……',
    draft: '起草', draft_streaming: '草稿（生成中）', sections: '各部分', statutes_cited: '法条引用',
    laws_retrieved: '根据事实检索到的法条',
    cite_title: '预测应引用的法条', predict: '预测', provisions: '预测的法条',
    provision: '法条', score: '得分', stages: '提出阶段', unresolved_corrections: '语料中不存在的更正',
    no_predictions: '没有预测到法条。', seconds: '秒', no_cite_model: '此服务器没有引用预测模型，引用预测不可用。如需提供，请这样启动服务器：',
    out_of_scope: '超出此模型的训练范围。它学习的是引用{trained}的裁判文书；这些事实指向{top}（范围得分 {score}，需要 {threshold}）。下面的预测不可靠。',
    in_scope: '在模型的训练范围内（范围得分 {score}）。', shown_anyway: '仍然显示预测（不可靠）',
    section_heading: '首部', section_facts: '事实', section_reasoning: '理由', section_result: '判决结果', section_appendix: '尾部',
    docs_title: '接口列表', docs_intro: '每个页面都使用这些 JSON 接口。机器可读的模式见', responses: '响应',
    chars: '{n} / {max} 字', cut_start: '粘贴的文本有 {n} 字，保留了最后 {max} 字（问题所在的结尾），前面的 {cut} 字被删去。请删减或分段提交。', cut: '粘贴的文本有 {n} 字，只保留了前 {max} 字（上限）。请删减或分段提交。',
    empty_question: '请先输入问题（不能为空或只有空格）。', empty_facts: '请先粘贴案件事实（不能为空或只有空格）。',
    elapsed: '{s} 秒', now: '当前', cancel: '取消',
    nf_title: '页面不存在', nf_text: '此地址没有页面。', nf_home: '前往法律咨询',
    st_started: '已开始', st_chat_search: '正在检索法条', st_chat_articles: '检索到的法条', st_chat_read: '模型正在阅读法条和问题', st_load_index: '正在打开索引', st_queued: '排队等待模型（位置 {n}）', st_retrieve_laws: '正在根据事实检索法条', st_predict: '正在根据事实判定罪名、法条和刑罚', st_retrieve_original: '正在用原始查询检索', st_laws: '检索到 {n} 条法条', st_laws_decided: '结构模型判定适用 {n} 条法条',
    st_generate: '正在撰写判决书（模型先读取提示）', st_first_text: '正在撰写', st_plan: '规划器正在决定第 {n} 轮',
    st_rewrite: '智能体“{agent}”正在改写查询', st_search: '正在用新查询检索', st_merge: '正在合并结果', st_done: '完成，用时 {s} 秒',
    ag_single_element: '单要素', ag_supplementary_element: '补充要素', ag_multi_element: '多要素',
    ag_supportive_law: '支撑法条', ag_semantic_abnormality: '语义异常', ag_exit: '结束', ag_stop: '停止', ag_language: '语言',
    ag_retriever: '检索', ag_planner: '规划器', src_original: '原始查询',
    sr_max_rounds: '达到轮数上限', sr_planner_exit: '规划器结束', sr_coverage: '一轮新增的法条太少', sr_agents_exhausted: '所有智能体都已使用',
    reason_not_shown: '规划器的说明是另一种语言，未显示。', step_failed: '此步出错',
    cs_retrieval: '检索', cs_rerank: '重排序', 'cs_always-add': '必引法条', cs_clusters: '共现簇', 'cs_co-citation': '共引', 'cs_similar-cases': '相似案例', cs_verification: '核验',
    rs_no_law: '未写明该条所属的法律', rs_unknown_law: '语料中没有法律“{law}”',
    rs_ambiguous_law: '该法律名称对应语料中的多部法律', rs_unknown_article: '语料中没有这一条',
    rs_unknown_paragraph: '这一条存在，但没有所引的款或项', rs_not_held: '地方性法规或外国法，语料不收录',
    rs_ambiguous_article: '多份不同的文档都对应这一条', rs_injection: '由来源中隐藏的指令要求引用（已移除）',
    rs_other: '语料中未找到',
    e_Unauthorized: '此服务器需要 API 密钥，而密钥缺失或有误。请点击“API 密钥”按钮输入。',
    e_RateLimited: '请求过于频繁：请 {retry_after} 秒后重试。', e_TooLarge: '请求过大，超出此服务器的上限。',
    e_UnsupportedMediaType: '请求不是以 JSON 发送的。', e_MalformedJSON: '请求不是有效的 JSON。',
    e_InvalidRequest: '部分输入未被接受：{fields}。', e_InputError: '部分输入未被接受{fields}。',
    e_NotFound: '未找到。', e_MethodNotAllowed: '此处不支持该操作。',
    e_NoModel: '此服务器没有用于此功能的模型（启动时未提供）。', e_Busy: '模型正忙（{waiting} 个请求在排队），请稍后再试。',
    e_LLMUnavailable: '语言模型暂时不可用，请稍后再试。', e_InternalError: '服务器出错，详情见服务器日志。',
    e_network: '无法连接服务器。', e_stream_cut: '结果返回前连接已中断。',
    f_question: '问题', f_query: '查询', f_facts: '事实', f_k: '法条数', f_processor: '对话处理方式',
    f_retriever: '检索器', f_laws: '法律筛选', f_history: '之前的对话', f_max_tokens: '回答长度', f_evidence_tokens: '证据预算',
    f_title: '法律名称', f_citation: '条文', f_as_of: '日期',
    v_string_too_long: '{field}过长（最多 {max_length} 字）', v_string_too_short: '{field}为空',
    v_missing: '缺少{field}', v_enum: '{field}的取值不在可选范围内', v_other: '{field}未被接受',
  },
};

export let lang = (() => {
  const stored = localStorage.getItem(LANG_STORE);
  if (stored === 'zh' || stored === 'en') return stored;
  return (navigator.language || 'zh').toLowerCase().startsWith('zh') ? 'zh' : 'en';
})();

export function setLanguage(value) {
  lang = value;
  localStorage.setItem(LANG_STORE, lang);
}

// t('round_n', {n: 2}); a missing key falls back to English, then to the key itself.
export function t(key, params) {
  let text = (STRINGS[lang] && STRINGS[lang][key]) || STRINGS.en[key] || key;
  for (const [name, value] of Object.entries(params || {})) text = text.split(`{${name}}`).join(String(value));
  return text;
}

// An article number as the law writes it ("133-1": 第133条之1, article 133-1).
export function articleLabel(number) {
  const [n, m] = String(number).split('-');
  return m ? t('article_n_sub', {n, m}) : t('article_n', {n});
}

// A code's label when there is one (prefix + code), else the code itself.
export function label(prefix, code) {
  const key = prefix + code;
  return STRINGS.en[key] ? t(key) : code;
}

export function applyLanguage(root = document) {
  document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-placeholder]')) el.placeholder = t(el.dataset.i18nPlaceholder);
  for (const el of root.querySelectorAll('[data-i18n-label]')) el.setAttribute('aria-label', t(el.dataset.i18nLabel));
  const title = document.querySelector('h1[data-i18n]');
  if (title) document.title = `legalrag · ${title.textContent}`;
}

// Is this text written in the interface's language? (The model may answer a Chinese prompt in English.)
export function inLanguage(text) {
  const cjk = (text.match(/[\u3400-\u9fff]/g) || []).length;
  const latin = (text.match(/[A-Za-z]/g) || []).length;
  return lang === 'zh' ? cjk > 0 && cjk >= latin / 4 : latin > 0 && cjk === 0;
}

// The reason a citation did not resolve, in the interface's language, as parts: strings are interface text,
// {law} is the corpus title (content). reasonText() joins them for a tooltip.
export function reasonParts(c) {
  const code = c.reason || 'other';
  if (lang === 'en' && code === 'other' && c.note) return [c.note];
  const law = ((c.note || '').match(/law '([^']+)'/) || [])[1] || '';
  return t('rs_' + code, {law: '\u0000'}).split('\u0000').flatMap((part, i) => (i ? [{law}, part] : [part]));
}

export function reasonText(c) {
  return reasonParts(c).map(p => (typeof p === 'string' ? p : p.law)).join('');
}

function fieldText(f) {
  const name = label('f_', f.field.split('.')[0]);
  const key = STRINGS.en['v_' + f.type] ? 'v_' + f.type : (f.type.startsWith('enum') ? 'v_enum' : 'v_other');
  return t(key, {field: name, ...(f.limits || {})});
}

// An ApiError (or any error) as one message in the interface's language.
export function errorText(err) {
  if (err && err.type === 'network') return t('e_network');
  if (err && err.type === 'stream_cut') return t('e_stream_cut');
  const type = err && err.type;
  if (!type || !STRINGS.en['e_' + type]) {
    if (lang === 'en' && err && err.message) return err.message;
    return t('e_InternalError');
  }
  if (lang === 'en' && err.message && !['Unauthorized', 'InvalidRequest'].includes(type)) return err.message;
  const fields = (err.fields || []).filter(f => f && f.field);
  const listed = fields.map(fieldText).join(lang === 'zh' ? '；' : '; ');
  return t('e_' + type, {...(err.params || {}), fields: type === 'InputError' ? (listed ? ` (${listed})` : '') : listed,
    retry_after: (err.params || {}).retry_after ?? '?', waiting: (err.params || {}).waiting ?? '?'});
}
