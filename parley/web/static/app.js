// The page of parley.web: the chats and the requests waiting for a human, live over a
// websocket. The server keeps the state; this script renders what it is sent and sends the
// human's actions. Chat data only ever reaches the page as text (textContent, text nodes):
// nothing it holds is parsed as HTML.
"use strict";

(function () {
  const token = new URLSearchParams(window.location.search).get("token") || "";
  const MAX_CONSOLE = 200000; // characters of printed output kept per chat
  const MAX_ANSWERED_SHOWN = 5; // answered requests kept on the page, newest
  const MAX_RECONNECTS = 20;
  const state = {
    session: null,
    closed: false,
    chats: new Map(),
    requests: new Map(),
    refs: new Map(),
    nextRef: 1,
  };
  let socket = null;
  let reconnects = 0;

  const byId = (id) => document.getElementById(id);

  // An element with properties (text, className, on<event>, attributes) and children (nodes,
  // or strings, which become text nodes).
  function h(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = String(value);
      else if (key === "className") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child !== null && child !== undefined && child !== false) node.append(child);
    }
    return node;
  }

  const domKey = (id) => String(id).replace(/[^A-Za-z0-9_-]/g, "_");

  function setConnection(text) {
    byId("connection").textContent = text;
  }

  function alertUser(text) {
    const alerts = byId("alerts");
    alerts.replaceChildren(h("p", { text }));
  }

  // -- the connection ------------------------------------------------------------------------

  function connect() {
    setConnection("Connecting\u2026");
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    const url = `${scheme}//${window.location.host}/ws?token=${encodeURIComponent(token)}`;
    socket = new WebSocket(url);
    socket.addEventListener("open", () => {
      reconnects = 0;
      setConnection("Connected: the chats below are live.");
    });
    socket.addEventListener("message", (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch (error) {
        return;
      }
      handle(message);
    });
    socket.addEventListener("close", () => {
      socket = null;
      if (state.closed) {
        setConnection("The server has closed: the chats shown here are no longer live.");
        return;
      }
      if (reconnects >= MAX_RECONNECTS) {
        setConnection("Disconnected. Reload the page to try again.");
        return;
      }
      reconnects += 1;
      setConnection("Disconnected: reconnecting\u2026");
      window.setTimeout(connect, Math.min(500 * reconnects, 5000));
    });
  }

  function send(action, context) {
    if (socket === null || socket.readyState !== WebSocket.OPEN) {
      alertUser("Not connected to the server: nothing was sent.");
      return false;
    }
    const ref = state.nextRef++;
    state.refs.set(ref, context || {});
    socket.send(JSON.stringify({ ...action, ref }));
    return true;
  }

  // What each message type from the server does; a type not listed here is ignored.
  const handlers = new Map([
    ["snapshot", applySnapshot],
    ["chat", (m) => upsertChat(m.chat)],
    ["item", (m) => upsertItem(m.chat, m.item)],
    ["token", (m) => appendDraft(m.chat, m.speaker, m.text)],
    ["draft_end", (m) => endDraft(m.chat)],
    ["console", (m) => appendConsole(m.chat, m.text)],
    ["request", (m) => upsertRequest(m.request)],
    ["result", onResult],
    ["closed", onClosed],
  ]);

  function handle(message) {
    const handler = handlers.get(message.type);
    if (handler) handler(message);
  }

  function onClosed() {
    state.closed = true;
    setConnection("The server has closed: the chats shown here are no longer live.");
  }

  function applySnapshot(snapshot) {
    state.session = snapshot.session;
    state.closed = Boolean(snapshot.closed);
    state.chats.clear();
    state.requests.clear();
    byId("chats").replaceChildren();
    byId("requests").replaceChildren();
    byId("global-console").textContent = "";
    for (const chat of snapshot.chats) {
      upsertChat(chat);
      for (const item of chat.items) upsertItem(chat.id, item);
      if (chat.draft) appendDraft(chat.id, chat.draft.speaker, chat.draft.text);
      if (chat.console) appendConsole(chat.id, chat.console);
    }
    if (snapshot.console) appendConsole(null, snapshot.console);
    for (const request of snapshot.requests) upsertRequest(request);
    refreshRequests();
  }

  // -- chats ------------------------------------------------------------------------------------

  // The record of a chat or request shown on the page (`records`: state.chats or
  // state.requests), made by `create` and added to the list `listId` the first time.
  function recordOf(records, item, create, listId) {
    let record = records.get(item.id);
    if (record === undefined) {
      record = create(item);
      records.set(item.id, record);
      byId(listId).append(record.root);
    }
    return record;
  }

  function upsertChat(chat) {
    const record = recordOf(state.chats, chat, createChat, "chats");
    byId("no-chats").hidden = true;
    record.chat = chat;
    renderChatStatus(record);
  }

  function createChat(chat) {
    const key = domKey(chat.id);
    const titleId = `chat-${key}-title`;
    const record = {};
    record.root = h("article", {
      className: "chat",
      id: `chat-${key}`,
      "aria-labelledby": titleId,
      "data-chat": chat.id,
    });
    const parent = chat.parent_id ? state.chats.get(chat.parent_id) : undefined;
    record.title = h("h3", { id: titleId, text: chat.title });
    record.nested = parent
      ? h("p", { className: "nested", text: `A chat inside ${parent.chat.title}` })
      : null;
    record.status = h("p", { className: "chat-status" });
    record.stop = h("button", {
      type: "button",
      className: "stop",
      "aria-label": `Stop the chat ${chat.title}`,
      text: "Stop chat",
      onclick: () => send({ type: "stop", chat: chat.id }, { chat: chat.id }),
    });
    record.transcript = h("ol", {
      className: "transcript",
      "aria-live": "polite",
      "aria-label": `Messages of ${chat.title}`,
    });
    // Streamed tokens are not a live region: a screen reader would read every token.
    record.draftWho = h("p", { className: "who" });
    record.draftText = document.createTextNode("");
    record.draft = h("div", { className: "draft", hidden: true }, record.draftWho, h("p", { className: "text" }, record.draftText));
    record.console = document.createTextNode("");
    record.consoleBox = h(
      "details",
      { className: "console" },
      h("summary", { text: "Printed output" }),
      h("pre", {}, record.console),
    );
    record.root.append(
      ...[record.title, record.nested, record.status, record.stop, record.transcript, record.draft, record.consoleBox].filter(Boolean),
    );
    return record;
  }

  function statusText(chat) {
    switch (chat.status) {
      case "running":
        return "Running";
      case "stopping":
        return "Stopping after the current step";
      case "ended":
        return `Ended (${chat.termination_reason || "no reason given"})`;
      case "failed":
        return `Failed: ${chat.error || "an error"}`;
      default:
        return chat.status;
    }
  }

  function renderChatStatus(record) {
    const chat = record.chat;
    const parts = [statusText(chat)];
    if (chat.speaking) parts.push(`${chat.speaking} is speaking`);
    parts.push(`cost $${Number(chat.cost || 0).toFixed(4)} (${chat.tokens || 0} tokens)`);
    record.status.textContent = parts.join(" \u00b7 ");
    record.root.dataset.status = chat.status;
    const live = chat.status === "running";
    record.stop.setAttribute("aria-disabled", live ? "false" : "true");
    if (chat.summary && !live) {
      if (!record.summary) {
        record.summary = h("p", { className: "summary" });
        record.transcript.after(record.summary);
      }
      record.summary.textContent = `Summary: ${chat.summary}`;
    }
  }

  function renderBody(container, view) {
    for (const segment of view.segments || []) {
      if (segment.kind === "code") {
        container.append(
          h("p", { className: "lang", text: `${segment.language || "code"} block:` }),
          h("pre", { className: "code" }, h("code", { text: segment.text })),
        );
      } else if (segment.text.trim()) {
        container.append(h("p", { className: "text", text: segment.text }));
      }
    }
    for (const call of view.tool_calls || []) {
      container.append(
        h("p", { className: "tool-call", text: `Tool call: ${call.name}${call.id ? ` (${call.id})` : ""}` }),
        h("pre", { className: "code" }, h("code", { text: call.arguments })),
      );
    }
    for (const result of view.tool_results || []) {
      container.append(
        h("p", { className: "tool-result", text: `Tool result${result.id ? ` for ${result.id}` : ""}:` }),
        h("pre", { className: "output", text: result.text }),
      );
    }
  }

  function renderItem(item) {
    const li = h("li", { className: `item ${item.kind}`, "data-item": item.id });
    if (item.kind === "message") {
      li.append(h("p", { className: "who", text: `${item.sender || "?"} \u2192 ${item.recipient || "?"}` }));
      renderBody(li, item);
    } else if (item.kind === "tool") {
      const state_ = item.status === "running" ? "running\u2026" : item.status;
      li.append(
        h("p", { className: "who", text: `${item.agent || "An agent"} runs the tool ${item.name} (${state_})` }),
        h("pre", { className: "code" }, h("code", { text: item.arguments })),
      );
      if (item.status !== "running") {
        li.append(h("p", { text: "Result:" }), h("pre", { className: "output", text: item.result || "" }));
      }
    } else if (item.kind === "code") {
      const languages = (item.languages || []).join(", ") || "code";
      const state_ = item.status === "running" ? "running\u2026" : `exit code ${item.exit_code}`;
      li.append(
        h("p", { className: "who", text: `${item.agent || "An agent"} runs ${languages} (${state_})` }),
        h("pre", { className: "code" }, h("code", { text: item.code })),
      );
      if (item.status !== "running") {
        li.append(h("p", { text: "Output:" }), h("pre", { className: "output", text: item.output || "" }));
      }
    } else {
      li.append(h("p", { text: item.text || "" }));
    }
    return li;
  }

  function upsertItem(chatId, item) {
    const record = state.chats.get(chatId);
    if (record === undefined) return;
    const node = renderItem(item);
    const old = record.transcript.querySelector(`li[data-item="${domKey(item.id)}"]`);
    if (old) old.replaceWith(node);
    else record.transcript.append(node);
  }

  function appendDraft(chatId, speaker, text) {
    const record = state.chats.get(chatId);
    if (record === undefined) return;
    record.draft.hidden = false;
    record.draftWho.textContent = `${speaker} is writing:`;
    record.draftText.appendData(text);
  }

  function endDraft(chatId) {
    const record = state.chats.get(chatId);
    if (record === undefined) return;
    record.draft.hidden = true;
    record.draftText.data = "";
  }

  function appendConsole(chatId, text) {
    let node;
    if (chatId === null || chatId === undefined) {
      byId("global-console-box").hidden = false;
      node = byId("global-console").firstChild || byId("global-console").appendChild(document.createTextNode(""));
    } else {
      const record = state.chats.get(chatId);
      if (record === undefined) return;
      node = record.console;
    }
    node.appendData(text);
    if (node.length > MAX_CONSOLE) node.deleteData(0, node.length - MAX_CONSOLE);
  }

  // -- requests ---------------------------------------------------------------------------------

  function upsertRequest(request) {
    const record = recordOf(state.requests, request, createRequest, "requests");
    record.request = request;
    renderRequestStatus(record);
    refreshRequests();
  }

  function createRequest(request) {
    const key = domKey(request.id);
    const titleId = `request-${key}-title`;
    const promptId = `request-${key}-prompt`;
    const inputId = `request-${key}-text`;
    const chat = state.chats.get(request.chat_id);
    const where = chat ? ` (${chat.chat.title})` : "";
    const who = request.agent || "A chat";
    const review = request.kind === "review";
    const record = { request, controls: [] };
    record.root = h("article", {
      className: `request ${request.kind}`,
      id: `request-${key}`,
      "aria-labelledby": titleId,
      "data-request": request.id,
    });
    // A call of a tool that requires approval: the page asks about that one call.
    const tool = review && request.tool_call;
    // Code that requires approval: the page asks about the blocks the agent would run.
    const code = review && request.code_blocks;
    let heading = review ? `${who} waits for your review${where}` : `${who} asks you${where}`;
    if (tool) heading = `${who} asks to run the tool ${tool.name}${where}`;
    if (code) heading = `${who} asks to run this code${where}`;
    record.root.append(h("h3", { id: titleId, text: heading }));
    if (code) {
      const box = h("div", { className: "pending-message" });
      record.message = box;
      const from = (request.message && request.message.sender) || request.sender;
      const count = code.length === 1 ? "The code block" : `The ${code.length} code blocks`;
      box.append(h("p", { className: "who", text: from ? `${count} ${from} wrote:` : `${count}:` }));
      renderBody(box, { segments: code.map((b) => ({ kind: "code", language: b.language, text: b.code })) });
      record.root.append(box);
    } else if (request.message) {
      const box = h("div", { className: "pending-message" });
      record.message = box;
      const from = request.message.sender || request.sender;
      let intro = from ? `The message from ${from}:` : "The message:";
      if (tool) intro = from ? `The call ${from} asked for:` : "The call:";
      box.append(h("p", { className: "who", text: intro }));
      renderBody(box, request.message);
      record.root.append(box);
    }
    // A review's buttons say what a terminal prompt would ("press enter to skip..."): only an
    // input request shows its prompt.
    const prompt = !review && request.prompt;
    if (prompt) record.root.append(h("p", { className: "prompt", id: promptId, text: request.prompt }));
    record.input = h("input", {
      id: inputId,
      type: request.password ? "password" : "text",
      name: "text",
      autocomplete: "off",
      "aria-describedby": prompt ? promptId : null,
    });
    const label = h("label", { for: inputId, text: review ? "Feedback (sent with Reject)" : "Your answer" });
    const form = h("form", { className: "answer", "aria-labelledby": titleId });
    const buttons = h("div", { className: "buttons" });
    const button = (text, type, className, onclick) => {
      const node = h("button", { type, className, text, onclick });
      record.controls.push(node);
      buttons.append(node);
      return node;
    };
    if (review) {
      button("Approve", "button", "approve", () => answer(record, "approve"));
      // The form's default button: Enter in the feedback box rejects with that feedback,
      // never approves (an Enter by mistake must not run code).
      button("Reject with feedback", "submit", "reject", null);
    } else {
      button("Send", "submit", "send", null);
    }
    button("Stop chat", "button", "stop", () => answer(record, "stop"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      answer(record, review ? "reject" : "send");
    });
    form.append(h("div", { className: "field" }, label, record.input), buttons);
    record.status = h("p", { className: "request-status", role: "status" });
    record.refusal = h("p", { className: "refusal" });
    record.root.append(form, record.status, record.refusal);
    return record;
  }

  function answer(record, action) {
    const text = record.input.value;
    if (action === "reject" && !text.trim() && record.request.status === "pending") {
      record.refusal.textContent = "Type the feedback to send with Reject, or press Approve.";
      record.input.focus();
      return;
    }
    // Sent even when this page already shows the request answered: the server decides, and
    // says why it refuses (another session answered first).
    record.refusal.textContent = "";
    if (send({ type: "answer", request: record.request.id, action, text }, { request: record.request.id })) {
      record.status.textContent = "Sending\u2026";
    }
  }

  function answeredBy(request) {
    const by = request.answered_by;
    if (by === state.session) return "You";
    if (by === "api") return "The program";
    if (by && by.startsWith("s")) return "Another session";
    return "Someone";
  }

  function describe(request) {
    switch (request.status) {
      case "pending":
        return "Waiting for your answer.";
      case "withdrawn":
        return "Withdrawn: the chat no longer waits for this.";
      case "closed":
        return "The server closed before this was answered.";
      default:
        break;
    }
    const who = answeredBy(request);
    if (request.action === "stop") return `Answered: ${who} stopped the chat.`;
    if (request.action === "approve" && request.tool_call) return `Answered: ${who} approved the call.`;
    if (request.action === "approve" && request.code_blocks) return `Answered: ${who} approved the code.`;
    if (request.action === "approve") return `Answered: ${who} approved.`;
    if (request.action === "reject") return `Answered: ${who} rejected it with feedback \u201c${request.answer}\u201d.`;
    if (request.password) return `Answered: ${who} answered (hidden).`;
    if (request.answer) return `Answered: ${who} answered \u201c${request.answer}\u201d.`;
    return `Answered: ${who} answered with nothing (auto-reply).`;
  }

  function renderRequestStatus(record) {
    const request = record.request;
    const pending = request.status === "pending";
    record.root.dataset.status = request.status;
    record.status.textContent = describe(request);
    record.input.readOnly = !pending;
    // Once answered, the message is in the chat's transcript; the card keeps the outcome.
    if (record.message) record.message.hidden = !pending;
    // aria-disabled, not disabled: the controls stay reachable, and a late click still reaches
    // the server, whose refusal is shown.
    for (const control of record.controls) control.setAttribute("aria-disabled", pending ? "false" : "true");
  }

  function refreshRequests() {
    const records = [...state.requests.values()];
    const waiting = records.filter((r) => r.request.status === "pending").length;
    byId("no-requests").hidden = waiting > 0;
    const answered = records.filter((r) => r.request.status !== "pending");
    for (const old of answered.slice(0, Math.max(0, answered.length - MAX_ANSWERED_SHOWN))) {
      old.root.remove();
      state.requests.delete(old.request.id);
    }
  }

  function onResult(result) {
    const context = state.refs.get(result.ref) || {};
    state.refs.delete(result.ref);
    const record = context.request ? state.requests.get(context.request) : undefined;
    if (result.ok) {
      if (record) renderRequestStatus(record);
      return;
    }
    const text = `Refused: ${result.error}`;
    alertUser(text);
    if (record) {
      renderRequestStatus(record);
      record.refusal.textContent = text;
    }
  }

  connect();
})();
