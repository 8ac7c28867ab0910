// Interface strings in English, German and Chinese. The language follows the browser's, or the
// switch in the header (kept in localStorage). Answers come in the asker's language from the server.

export const LANGUAGES = ["en", "de", "zh"];

const STRINGS = {
  en: {
    skip: "Skip to content", nav: "Main", "nav.chat": "Chat", "nav.explore": "Graph explorer",
    "nav.communities": "Communities", "nav.corpus": "Corpus and jobs", "nav.admin": "Tiers and admin",
    language: "Language", apiKey: "API key", close: "Close",
    "chat.title": "Ask a medical question", "chat.question": "Your question", "chat.ask": "Ask",
    "chat.new": "New conversation", "chat.tier": "Answer tier", "chat.tierAuto": "chosen by the router",
    "chat.session": "Conversation", "chat.queued": "Waiting in line: position {n}",
    "chat.working": "Working…", "chat.sources": "Sources", "chat.refused": "No answer from the sources",
    "chat.route": "Route", "chat.paths": "Retrieval paths", "chat.model": "Model",
    "chat.hops": "Steps of the question", "chat.hopAnswer": "found: {x}", "chat.hopUnsupported": "no supporting passage",
    "status.hops": "Answering the question step by step", "status.verify": "Checking each step",
    "status.rehop": "Trying the next candidate",
    "chat.empty": "Ask about the documents in the corpus; every statement cites its passage.",
    "chat.keyNeeded": "This server needs an API key: enter it at the top right.",
    "status.guard_input": "Checking the question", "status.refuse": "Declining", "status.rewrite": "Reading the conversation",
    "status.analyse": "Recognising medical entities", "status.semantic": "Searching passages",
    "status.relational": "Following the knowledge graph", "status.fuse": "Combining the evidence",
    "status.assess": "Weighing the evidence", "status.complete_gaps": "Fetching missing literature",
    "status.generate": "Writing the answer", "status.guard_output": "Checking the answer", "status.persist": "Saving",
    "passage.source": "Source", "passage.section": "Section", "passage.page": "Page", "passage.document": "Document",
    "passage.unavailable": "The full passage is not available; the quoted text:",
    "explore.title": "Graph explorer", "explore.name": "Name of a concept (any language)", "explore.find": "Find",
    "explore.anyLang": "any language", "explore.names": "Names", "explore.category": "Category",
    "explore.communities": "Communities", "explore.neighbours": "Neighbours (click to expand)",
    "explore.edges": "Connections (click to see shared passages)", "explore.shared": "Passages mentioning both",
    "explore.weight": "shared passages", "explore.hint": "Click a node to expand it, an edge to list the passages that connect the two.",
    "explore.drawn": "{nodes} concepts, {edges} connections",
    "comm.title": "Communities", "comm.level": "Level", "comm.all": "all levels", "comm.size": "members",
    "comm.members": "Top members", "comm.prev": "Previous", "comm.next": "Next", "comm.page": "{from}–{to} of {total}",
    "comm.none": "No communities yet: run the community build (python -m jobs.build_communities).",
    "corpus.title": "Corpus and jobs", "corpus.counts": "In the stores", "corpus.runs": "Recent builds",
    "corpus.run": "Build", "corpus.started": "Started", "corpus.duration": "Duration", "corpus.status": "Status",
    "corpus.inputs": "Inputs", "corpus.written": "Written", "corpus.failures": "Failures",
    "corpus.running": "Running: updates every few seconds", "corpus.none": "No build recorded yet.",
    "corpus.docsChunks": "{docs} documents, {chunks} chunks",
    "admin.title": "Tiers and administration", "admin.needKey": "Enter an admin API key at the top right.",
    "admin.tiers": "LLM tiers", "admin.engine": "Engine", "admin.state": "State", "admin.wakes": "Wakes",
    "admin.sleeps": "Sleeps", "admin.wakeTime": "Wake time (p50)", "admin.inFlight": "In flight",
    "admin.requests": "Requests", "admin.sleep": "Sleep", "admin.wake": "Wake", "admin.users": "Users and keys",
    "admin.user": "User", "admin.role": "Role", "admin.keys": "Active keys", "admin.newUser": "New user",
    "admin.create": "Create user and key", "admin.newKey": "New key", "admin.revoke": "Revoke",
    "admin.keyOnce": "The new key for {user}; it is shown only now:", "admin.usage": "Usage today",
    "admin.quota": "used {used} of {limit}", "admin.unlimited": "no limit", "admin.keyList": "Keys", "admin.key": "Key",
    "admin.created": "Created", "admin.lastUsed": "Last used", "admin.revoked": "Revoked",
    "admin.concurrency": "Requests running {active}, waiting {queued}, at most {max}",
    error: "Error", loading: "Loading…", none: "none",
  },
  de: {
    skip: "Zum Inhalt springen", nav: "Hauptmenü", "nav.chat": "Chat", "nav.explore": "Graph-Explorer",
    "nav.communities": "Communities", "nav.corpus": "Korpus und Jobs", "nav.admin": "Stufen und Verwaltung",
    language: "Sprache", apiKey: "API-Schlüssel", close: "Schließen",
    "chat.title": "Eine medizinische Frage stellen", "chat.question": "Ihre Frage", "chat.ask": "Fragen",
    "chat.new": "Neues Gespräch", "chat.tier": "Antwortstufe", "chat.tierAuto": "vom Router gewählt",
    "chat.session": "Gespräch", "chat.queued": "In der Warteschlange: Position {n}",
    "chat.working": "In Arbeit…", "chat.sources": "Quellen", "chat.refused": "Keine Antwort aus den Quellen",
    "chat.route": "Routing", "chat.paths": "Suchpfade", "chat.model": "Modell",
    "chat.hops": "Teilfragen", "chat.hopAnswer": "gefunden: {x}", "chat.hopUnsupported": "keine belegende Textstelle",
    "status.hops": "Teilfragen werden nacheinander beantwortet", "status.verify": "Teilschritte werden geprüft",
    "status.rehop": "Nächster Kandidat wird versucht",
    "chat.empty": "Fragen Sie zu den Dokumenten des Korpus; jede Aussage zitiert ihre Textstelle.",
    "chat.keyNeeded": "Dieser Server verlangt einen API-Schlüssel: oben rechts eingeben.",
    "status.guard_input": "Frage wird geprüft", "status.refuse": "Ablehnung", "status.rewrite": "Gespräch wird gelesen",
    "status.analyse": "Medizinische Begriffe werden erkannt", "status.semantic": "Textstellen werden gesucht",
    "status.relational": "Wissensgraph wird durchsucht", "status.fuse": "Belege werden zusammengeführt",
    "status.assess": "Belege werden gewichtet", "status.complete_gaps": "Fehlende Literatur wird geholt",
    "status.generate": "Antwort wird geschrieben", "status.guard_output": "Antwort wird geprüft", "status.persist": "Speichern",
    "passage.source": "Quelle", "passage.section": "Abschnitt", "passage.page": "Seite", "passage.document": "Dokument",
    "passage.unavailable": "Die ganze Textstelle ist nicht verfügbar; der zitierte Text:",
    "explore.title": "Graph-Explorer", "explore.name": "Name eines Begriffs (jede Sprache)", "explore.find": "Suchen",
    "explore.anyLang": "jede Sprache", "explore.names": "Namen", "explore.category": "Kategorie",
    "explore.communities": "Communities", "explore.neighbours": "Nachbarn (zum Erweitern klicken)",
    "explore.edges": "Verbindungen (zeigt gemeinsame Textstellen)", "explore.shared": "Textstellen mit beiden Begriffen",
    "explore.weight": "gemeinsame Textstellen", "explore.hint": "Einen Knoten anklicken, um ihn zu erweitern, eine Kante, um die verbindenden Textstellen zu sehen.",
    "explore.drawn": "{nodes} Begriffe, {edges} Verbindungen",
    "comm.title": "Communities", "comm.level": "Ebene", "comm.all": "alle Ebenen", "comm.size": "Mitglieder",
    "comm.members": "Wichtigste Mitglieder", "comm.prev": "Zurück", "comm.next": "Weiter", "comm.page": "{from}–{to} von {total}",
    "comm.none": "Noch keine Communities: den Community-Build ausführen (python -m jobs.build_communities).",
    "corpus.title": "Korpus und Jobs", "corpus.counts": "In den Speichern", "corpus.runs": "Letzte Builds",
    "corpus.run": "Build", "corpus.started": "Gestartet", "corpus.duration": "Dauer", "corpus.status": "Status",
    "corpus.inputs": "Eingaben", "corpus.written": "Geschrieben", "corpus.failures": "Fehler",
    "corpus.running": "Läuft: wird alle paar Sekunden aktualisiert", "corpus.none": "Noch kein Build verzeichnet.",
    "corpus.docsChunks": "{docs} Dokumente, {chunks} Abschnitte",
    "admin.title": "Stufen und Verwaltung", "admin.needKey": "Oben rechts einen Admin-API-Schlüssel eingeben.",
    "admin.tiers": "LLM-Stufen", "admin.engine": "Engine", "admin.state": "Zustand", "admin.wakes": "Aufwecken",
    "admin.sleeps": "Schlafen", "admin.wakeTime": "Aufweckzeit (Median)", "admin.inFlight": "Laufend",
    "admin.requests": "Anfragen", "admin.sleep": "Schlafen legen", "admin.wake": "Aufwecken", "admin.users": "Benutzer und Schlüssel",
    "admin.user": "Benutzer", "admin.role": "Rolle", "admin.keys": "Aktive Schlüssel", "admin.newUser": "Neuer Benutzer",
    "admin.create": "Benutzer und Schlüssel anlegen", "admin.newKey": "Neuer Schlüssel", "admin.revoke": "Widerrufen",
    "admin.keyOnce": "Der neue Schlüssel für {user}; er wird nur jetzt angezeigt:", "admin.usage": "Nutzung heute",
    "admin.quota": "{used} von {limit} verbraucht", "admin.unlimited": "unbegrenzt", "admin.keyList": "Schlüssel", "admin.key": "Schlüssel",
    "admin.created": "Angelegt", "admin.lastUsed": "Zuletzt benutzt", "admin.revoked": "Widerrufen",
    "admin.concurrency": "Laufende Anfragen {active}, wartend {queued}, höchstens {max}",
    error: "Fehler", loading: "Wird geladen…", none: "keine",
  },
  zh: {
    skip: "跳到内容", nav: "主菜单", "nav.chat": "问答", "nav.explore": "知识图谱",
    "nav.communities": "社区", "nav.corpus": "语料与任务", "nav.admin": "模型层级与管理",
    language: "语言", apiKey: "API 密钥", close: "关闭",
    "chat.title": "提出医学问题", "chat.question": "您的问题", "chat.ask": "提问",
    "chat.new": "新对话", "chat.tier": "回答层级", "chat.tierAuto": "由路由器选择",
    "chat.session": "对话", "chat.queued": "排队中：第 {n} 位",
    "chat.working": "处理中…", "chat.sources": "来源", "chat.refused": "来源中没有答案",
    "chat.route": "路由", "chat.paths": "检索路径", "chat.model": "模型",
    "chat.hops": "分步检索", "chat.hopAnswer": "得到：{x}", "chat.hopUnsupported": "没有支持的段落",
    "status.hops": "分步回答问题", "status.verify": "核对每一步的证据",
    "status.rehop": "尝试下一个候选",
    "chat.empty": "请就语料库中的文献提问；每一句都会引用其出处段落。",
    "chat.keyNeeded": "此服务器需要 API 密钥：请在右上角输入。",
    "status.guard_input": "检查问题", "status.refuse": "拒绝回答", "status.rewrite": "理解对话",
    "status.analyse": "识别医学实体", "status.semantic": "检索段落",
    "status.relational": "遍历知识图谱", "status.fuse": "融合证据",
    "status.assess": "评估证据", "status.complete_gaps": "获取缺失文献",
    "status.generate": "撰写回答", "status.guard_output": "检查回答", "status.persist": "保存",
    "passage.source": "来源", "passage.section": "章节", "passage.page": "页码", "passage.document": "文献",
    "passage.unavailable": "无法获取完整段落；引用的文字：",
    "explore.title": "知识图谱浏览", "explore.name": "概念名称（任何语言）", "explore.find": "查找",
    "explore.anyLang": "任何语言", "explore.names": "名称", "explore.category": "类别",
    "explore.communities": "社区", "explore.neighbours": "相邻概念（点击展开）",
    "explore.edges": "关联（点击查看共同段落）", "explore.shared": "同时提及两者的段落",
    "explore.weight": "个共同段落", "explore.hint": "点击节点展开，点击边查看连接两者的段落。",
    "explore.drawn": "{nodes} 个概念，{edges} 条关联",
    "comm.title": "社区", "comm.level": "层级", "comm.all": "所有层级", "comm.size": "个成员",
    "comm.members": "主要成员", "comm.prev": "上一页", "comm.next": "下一页", "comm.page": "第 {from}–{to} 个，共 {total} 个",
    "comm.none": "尚无社区：请运行社区构建（python -m jobs.build_communities）。",
    "corpus.title": "语料与任务", "corpus.counts": "存储内容", "corpus.runs": "最近的构建",
    "corpus.run": "构建", "corpus.started": "开始时间", "corpus.duration": "耗时", "corpus.status": "状态",
    "corpus.inputs": "输入", "corpus.written": "已写入", "corpus.failures": "失败",
    "corpus.running": "运行中：每隔几秒更新", "corpus.none": "尚无构建记录。",
    "corpus.docsChunks": "{docs} 篇文献，{chunks} 个段落",
    "admin.title": "模型层级与管理", "admin.needKey": "请在右上角输入管理员 API 密钥。",
    "admin.tiers": "LLM 层级", "admin.engine": "引擎", "admin.state": "状态", "admin.wakes": "唤醒次数",
    "admin.sleeps": "休眠次数", "admin.wakeTime": "唤醒耗时（中位数）", "admin.inFlight": "处理中",
    "admin.requests": "请求数", "admin.sleep": "休眠", "admin.wake": "唤醒", "admin.users": "用户与密钥",
    "admin.user": "用户", "admin.role": "角色", "admin.keys": "有效密钥", "admin.newUser": "新用户",
    "admin.create": "创建用户和密钥", "admin.newKey": "新密钥", "admin.revoke": "吊销",
    "admin.keyOnce": "{user} 的新密钥，仅显示这一次：", "admin.usage": "今日用量",
    "admin.quota": "已用 {used} / {limit}", "admin.unlimited": "不限", "admin.keyList": "密钥", "admin.key": "密钥",
    "admin.created": "创建时间", "admin.lastUsed": "最近使用", "admin.revoked": "已吊销",
    "admin.concurrency": "运行中 {active}，排队 {queued}，上限 {max}",
    error: "错误", loading: "加载中…", none: "无",
  },
};

export function pickLanguage(stored, browser) {
  if (LANGUAGES.includes(stored)) return stored;
  for (const tag of browser || []) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (LANGUAGES.includes(base)) return base;
  }
  return "en";
}

let current = "en";
export function setLanguage(lang) { current = LANGUAGES.includes(lang) ? lang : "en"; }
export function language() { return current; }

export function t(key, vars = {}) {
  const text = STRINGS[current][key] ?? STRINGS.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => String(vars[name] ?? ""));
}

export function missingKeys() {
  // for the tests: every language has every English key
  const out = {};
  for (const lang of LANGUAGES) out[lang] = Object.keys(STRINGS.en).filter((k) => !(k in STRINGS[lang]));
  return out;
}
