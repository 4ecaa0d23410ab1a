// i18n.js: the page's words, in English and Japanese, and how numbers and
// dates are written. The language is the one the user picked on the page
// (kept in localStorage), else the browser's first language we have, else
// English. index.html marks its words with data-i18n (text),
// data-i18n-placeholder, data-i18n-label (aria-label) and data-i18n-title;
// app.js calls t('key', {vars}).

const messages = {
  en: {
    'lang.name': 'English',
    'lang.label': 'Language',
    'nav.sections': 'Sections',
    'tab.chat': 'Chat',
    'tab.search': 'Search',
    'tab.runs': 'Agent runs',
    'tab.cache': 'Agent cache',
    'tab.index': 'Index',
    'mode.title': 'How answers are made',
    'mode.badge': 'mode: {mode} · {sources} sources, {chunks} chunks',
    'notice.empty': 'The index is empty: add a folder or a URL on the Index tab (or run sagasu index DIR) before asking.',

    'chat.newThread': 'New thread',
    'chat.threads': 'Threads',
    'chat.message': 'Message',
    'chat.placeholder': 'Ask the index a question',
    'chat.offline': 'offline',
    'chat.send': 'Send',
    'chat.stop': 'Stop',
    'chat.trace': 'Trace',
    'chat.citation': 'Citation',
    'chat.steps': 'steps',
    'chat.meta': '{how} · {turns} turn(s) · {ms} ms',
    'chat.offlineMode': 'offline',
    'chat.model': 'model',
    'chat.stopped': 'Stopped early: {reason}; this is the best cited answer so far.',
    'chat.dropped': 'Dropped (not backed by its sources): {text}',
    'chat.citations': 'Citations',
    'cite.title': 'Citation [{n}]',
    'cite.none': 'This marker cites nothing the run kept.',
    'cite.lines': '{uri} · lines {from}–{to}',
    'cite.openSection': 'open section',
    'cite.openSource': 'open source',
    'cite.cut': '… (cut: open source for the rest)',
    'cite.open': 'Open citation {n}',
    'claim.supported': 'Supported by its cited passages',
    'claim.unsupported': 'Not backed by its cited passages',
    'claim.unchecked': 'Not checked (too short to state anything)',
    'source.loading': 'loading…',
    'source.head': '{uri}{section} (lines {from}–{to})',
    'source.shown': 'Shown: the first {shown} of {total} bytes.',

    'step.thought': 'thought',
    'step.action': 'tool call',
    'step.observation': 'observation',
    'step.reflection': 'reflection',
    'step.plan': 'plan',
    'step.replan': 'replan',
    'step.answer': 'answer',
    'step.error': 'error',
    'step.usage': 'usage',
    'step.parse_failure': 'parse failure',
    'step.progress': 'progress',
    'step.outcome': 'outcome',
    'step.failed': ' (failed)',
    'step.tokens': '{in} tokens in, {out} out',
    'step.ms': ' {ms} ms',

    'search.label': 'Search',
    'search.placeholder': 'Search the index',
    'search.mode': 'Mode',
    'search.default': 'default',
    'search.keyword': 'keyword',
    'search.semantic': 'semantic',
    'search.hybrid': 'hybrid',
    'search.type': 'Type',
    'search.anyType': 'any type',
    'search.file': 'file',
    'search.text': 'text',
    'search.url': 'url',
    'search.glob': 'Glob',
    'search.globPlaceholder': 'glob, e.g. en/**/*.md',
    'search.submit': 'Search',
    'search.info': '{n} result(s), {mode}, {ms} ms',
    'search.results': 'Results',
    'search.source': 'Source',
    'eval.goal': 'Goal',
    'eval.placeholder': 'Goal: what should these results tell you?',
    'eval.submit': 'Evaluate results',
    'eval.scores': 'confidence {confidence} · coverage {coverage} · relevance {relevance}',
    'eval.found': 'found: {list}',
    'eval.missing': 'missing: {list}',
    'eval.next': 'next: {action} — {reason}',

    'runs.goal': 'Goal',
    'runs.placeholder': 'Goal, e.g. understand how to deploy the site, or open https://… and find …',
    'runs.start': 'Start run',
    'runs.list': 'Runs',
    'runs.stop': 'Stop',
    'runs.resume': 'Resume',
    'life.exportJSON': 'Export JSON',
    'life.exportMD': 'Export Markdown',
    'life.delete': 'Delete',
    'life.confirm.agent': 'Delete agent run {id} with its whole log? This cannot be undone.',
    'life.confirm.chat': 'Delete chat thread {id} with all its turns? This cannot be undone.',
    'life.force': 'If no process drives it any more (it was killed), delete it anyway?',
    'runs.plan': 'Plan',
    'runs.replanned': 'Plan (replanned {n}×)',
    'runs.timeline': 'Timeline',
    'runs.mcp': 'MCP servers',
    'runs.settings': 'Settings',
    'runs.plannerModel': 'planner model',
    'runs.executorModel': 'executor model',
    'runs.configured': 'configured',
    'runs.temperature': 'temperature',
    'runs.maxTokens': 'max tokens',
    'runs.thinking': 'thinking budget',
    'runs.modelDefault': 'model’s',
    'runs.toolCalls': 'tool calls',
    'runs.duration': 'duration',
    'runs.role.planner': 'planner',
    'runs.role.executor': 'executor',
    'runs.settingsMCP': 'MCP: {servers}',
    'runs.settingsModel': '{role}: {driver}/{model} (temperature {temperature}, {tokens} tokens{thinking})',
    'runs.settingsThinking': ', thinking {n}',
    'runs.settingsLimits': 'limits: {calls} tool calls, {duration}',
    'status.running': 'running',
    'status.success': 'success',
    'status.failure': 'failure',
    'status.stopped': 'stopped',
    'status.pending': 'pending',
    'status.done': 'done',
    'status.failed': 'failed',
    'status.skipped': 'skipped',

    'cache.kind': 'Kind',
    'cache.allKinds': 'all kinds',
    'cache.evaluations': 'evaluations',
    'cache.refinements': 'refinements',
    'cache.stages': 'stages',
    'cache.sessions': 'sessions',
    'cache.refresh': 'Refresh',
    'cache.records': 'Records',
    'cache.empty': 'No records yet: search with the loop, evaluate results or run the agent.',

    'index.path': 'Folder or URL',
    'index.placeholder': 'a folder, a file or https://...',
    'index.add': 'Add to index',
    'index.source': 'Source',
    'index.type': 'Type',
    'index.chunks': 'Chunks',
    'index.bytes': 'Bytes',
    'index.indexed': 'Indexed',
    'index.stats': '{sources} sources, {chunks} chunks, {vectors} vectors',
    'index.watching': 'Watching {root}: in step as of {at}',
    'index.watched': '{root} (watched by another process): in step as of {at}',
    'index.notyet': 'not yet',
    'index.syncing': ' · syncing now (searches answer from the last state written)',
    'index.pending': ' · {n} change(s) waiting',
    'index.failed': ' · last sync failed: {error}',
    'index.done': 'done: {added} added, {updated} updated, {unchanged} unchanged, {chunks} chunks',
    'index.skipped': ', {n} skipped',
  },
  ja: {
    'lang.name': '日本語',
    'lang.label': '表示言語',
    'nav.sections': 'セクション',
    'tab.chat': 'チャット',
    'tab.search': '検索',
    'tab.runs': 'エージェント実行',
    'tab.cache': 'エージェントキャッシュ',
    'tab.index': 'インデックス',
    'mode.title': '回答の作り方',
    'mode.badge': 'モード: {mode} · ソース {sources} 件、チャンク {chunks} 件',
    'notice.empty': 'インデックスが空です。質問する前に「インデックス」タブでフォルダーか URL を追加してください（または sagasu index DIR を実行）。',

    'chat.newThread': '新しいスレッド',
    'chat.threads': 'スレッド',
    'chat.message': 'メッセージ',
    'chat.placeholder': 'インデックスに質問する',
    'chat.offline': 'オフライン',
    'chat.send': '送信',
    'chat.stop': '停止',
    'chat.trace': 'トレース',
    'chat.citation': '引用',
    'chat.steps': '手順',
    'chat.meta': '{how} · {turns} ターン · {ms} ミリ秒',
    'chat.offlineMode': 'オフライン（抽出型）',
    'chat.model': 'モデル',
    'chat.stopped': '途中で止まりました（{reason}）。ここまでで最も根拠のある回答です。',
    'chat.dropped': '根拠がないため削除: {text}',
    'chat.citations': '引用元',
    'cite.title': '引用 [{n}]',
    'cite.none': 'この番号が指す引用は残っていません。',
    'cite.lines': '{uri} · {from}–{to} 行',
    'cite.openSection': 'セクションを開く',
    'cite.openSource': '全文を開く',
    'cite.cut': '…（省略。続きは「全文を開く」で）',
    'cite.open': '引用 {n} を開く',
    'claim.supported': '引用元の記述に裏付けられています',
    'claim.unsupported': '引用元の記述に裏付けがありません',
    'claim.unchecked': '未確認（短すぎて主張を含みません）',
    'source.loading': '読み込み中…',
    'source.head': '{uri}{section}（{from}–{to} 行）',
    'source.shown': '先頭 {shown} バイトを表示しています（全体 {total} バイト）。',

    'step.thought': '思考',
    'step.action': 'ツール呼び出し',
    'step.observation': '観察',
    'step.reflection': '振り返り',
    'step.plan': '計画',
    'step.replan': '再計画',
    'step.answer': '回答',
    'step.error': 'エラー',
    'step.usage': 'トークン',
    'step.parse_failure': '解析失敗',
    'step.progress': '進捗',
    'step.outcome': '結果',
    'step.failed': '（失敗）',
    'step.tokens': '入力 {in} トークン、出力 {out} トークン',
    'step.ms': ' {ms} ミリ秒',

    'search.label': '検索語',
    'search.placeholder': 'インデックスを検索',
    'search.mode': '検索方式',
    'search.default': '既定',
    'search.keyword': 'キーワード',
    'search.semantic': 'セマンティック',
    'search.hybrid': 'ハイブリッド',
    'search.type': '種類',
    'search.anyType': 'すべての種類',
    'search.file': 'ファイル',
    'search.text': 'テキスト',
    'search.url': 'URL',
    'search.glob': 'パス（glob）',
    'search.globPlaceholder': 'glob（例: ja/**/*.md）',
    'search.submit': '検索',
    'search.info': '{n} 件（{mode}、{ms} ミリ秒）',
    'search.results': '検索結果',
    'search.source': 'ソース',
    'eval.goal': '目的',
    'eval.placeholder': '目的: この結果から何を知りたいですか？',
    'eval.submit': '結果を評価',
    'eval.scores': '確信度 {confidence} · 網羅度 {coverage} · 関連度 {relevance}',
    'eval.found': '見つかった観点: {list}',
    'eval.missing': '足りない観点: {list}',
    'eval.next': '次の一手: {action} — {reason}',

    'runs.goal': '目的',
    'runs.placeholder': '目的（例: サイトのデプロイ方法を理解する、https://… を開いて … を探す）',
    'runs.start': '実行を開始',
    'runs.list': '実行一覧',
    'runs.stop': '停止',
    'runs.resume': '再開',
    'life.exportJSON': 'JSON で書き出す',
    'life.exportMD': 'Markdown で書き出す',
    'life.delete': '削除',
    'life.confirm.agent': 'エージェントの実行 {id} をログごと削除しますか？元に戻せません。',
    'life.confirm.chat': 'チャットスレッド {id} をすべてのターンごと削除しますか？元に戻せません。',
    'life.force': 'もう動かしているプロセスがない（強制終了した）なら、それでも削除しますか？',
    'runs.plan': '計画',
    'runs.replanned': '計画（{n} 回再計画）',
    'runs.timeline': 'タイムライン',
    'runs.mcp': 'MCP サーバー',
    'runs.settings': '設定',
    'runs.plannerModel': '計画役のモデル',
    'runs.executorModel': '実行役のモデル',
    'runs.configured': '設定どおり',
    'runs.temperature': '温度',
    'runs.maxTokens': '最大トークン数',
    'runs.thinking': '思考トークン予算',
    'runs.modelDefault': 'モデルの既定',
    'runs.toolCalls': 'ツール呼び出し数',
    'runs.duration': '制限時間',
    'runs.role.planner': '計画役',
    'runs.role.executor': '実行役',
    'runs.settingsMCP': 'MCP: {servers}',
    'runs.settingsModel': '{role}: {driver}/{model}（温度 {temperature}、{tokens} トークン{thinking}）',
    'runs.settingsThinking': '、思考 {n}',
    'runs.settingsLimits': '上限: ツール呼び出し {calls} 回、{duration}',
    'status.running': '実行中',
    'status.success': '成功',
    'status.failure': '失敗',
    'status.stopped': '停止',
    'status.pending': '未着手',
    'status.done': '完了',
    'status.failed': '失敗',
    'status.skipped': 'スキップ',

    'cache.kind': '種類',
    'cache.allKinds': 'すべて',
    'cache.evaluations': '評価',
    'cache.refinements': 'クエリ改善',
    'cache.stages': 'ステージ',
    'cache.sessions': 'セッション',
    'cache.refresh': '更新',
    'cache.records': '記録',
    'cache.empty': 'まだ記録がありません。ループ検索、結果の評価、エージェントの実行で記録されます。',

    'index.path': 'フォルダーまたは URL',
    'index.placeholder': 'フォルダー、ファイル、または https://...',
    'index.add': 'インデックスに追加',
    'index.source': 'ソース',
    'index.type': '種類',
    'index.chunks': 'チャンク',
    'index.bytes': 'バイト',
    'index.indexed': '登録日時',
    'index.stats': 'ソース {sources} 件、チャンク {chunks} 件、ベクトル {vectors} 件',
    'index.watching': '{root} を監視中: {at} 時点の内容を反映済み',
    'index.watched': '{root}（別のプロセスが監視）: {at} 時点の内容を反映済み',
    'index.notyet': '未反映',
    'index.syncing': ' · 同期中（検索は最後に書き込んだ状態から答えます）',
    'index.pending': ' · 未反映の変更 {n} 件',
    'index.failed': ' · 直前の同期に失敗: {error}',
    'index.done': '完了: 追加 {added} 件、更新 {updated} 件、変更なし {unchanged} 件、チャンク {chunks} 件',
    'index.skipped': '、スキップ {n} 件',
  },
};

export const languages = Object.keys(messages);
const STORE = 'sagasu.lang';

// pick chooses the language: the stored choice, else the first of the
// browser's languages (ja-JP counts as ja) that the page has, else English.
export function pick(stored, preferred) {
  if (languages.includes(stored)) return stored;
  for (const l of preferred || []) {
    const base = String(l).toLowerCase().split('-')[0];
    if (languages.includes(base)) return base;
  }
  return 'en';
}

function stored() {
  try { return localStorage.getItem(STORE); } catch { return null; }
}

let lang = pick(stored(), navigator.languages?.length ? navigator.languages : [navigator.language]);

export function current() { return lang; }

// t returns the message for key in the current language (English when the
// table lacks it, the key itself when both do), with {name} filled from vars.
export function t(key, vars) {
  const m = messages[lang][key] ?? messages.en[key] ?? key;
  return vars ? m.replace(/\{(\w+)\}/g, (all, k) => (k in vars ? String(vars[k]) : all)) : m;
}

// has reports whether key has a message (for labels built from data, such
// as a trace step's type).
export function has(key) { return key in messages.en; }

// num writes a number the reader's way (1,234 / 1,234; fixed digits when asked).
export function num(n, digits) {
  const opt = digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits };
  return Number.isFinite(Number(n)) ? new Intl.NumberFormat(lang, opt).format(Number(n)) : String(n ?? '');
}

// date writes a timestamp the reader's way; text that is not a date stays.
export function date(s) {
  const d = new Date(s);
  return s && !Number.isNaN(d.getTime()) ? new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'short' }).format(d) : String(s ?? '');
}

// apply writes the current language's words into root's marked elements
// and sets the document's lang attribute.
export function apply(root = document) {
  document.documentElement.lang = lang;
  for (const e of root.querySelectorAll('[data-i18n]')) e.textContent = t(e.dataset.i18n);
  for (const e of root.querySelectorAll('[data-i18n-placeholder]')) e.placeholder = t(e.dataset.i18nPlaceholder);
  for (const e of root.querySelectorAll('[data-i18n-label]')) e.setAttribute('aria-label', t(e.dataset.i18nLabel));
  for (const e of root.querySelectorAll('[data-i18n-title]')) e.title = t(e.dataset.i18nTitle);
}

// set switches the language, remembers it and rewrites the page's words.
export function set(l) {
  lang = pick(l, []);
  try { localStorage.setItem(STORE, lang); } catch { /* private mode: this page only */ }
  apply();
}
