"""A scripted model for bench/harbor.sh: an OpenAI chat-completions server
(streamed) on loopback that answers from the request alone, so any number of
concurrent conversations each get their own script.

crates/testkit's `scripted-model` plays one global script in order, which is
right for one conversation and wrong for eight at once (trial A would take
trial B's "done"). This one decides each reply from the conversation it is
sent: the task's instruction names what to do, and

- a conversation whose last message is not a tool result gets one tool call:
  `write_file` when the instruction says  write "TEXT" to PATH, `shell`
  when it says  run: COMMAND;
- a conversation that ends with a tool result gets a short text answer;
- a model other than the ones given with --model is refused with OpenAI's
  404 `model_not_found`, as a real provider refuses a name it does not know;
- GET /v1/models lists the --model names, as OpenAI's list endpoint does
  (axon offers them as its ACP `model` option, which Harbor's `-a acp`
  matches `-m` against).

Usage reported per reply: prompt tokens = request bytes / 4 (half of them
cached when the conversation already has a tool result), a fixed small
completion count, so Harbor's token figures are non-zero and checkable.

Prints `listening on http://127.0.0.1:PORT/v1` when ready; serves until
killed. GET /stats returns the counts of replies by kind (`not_served`:
other paths, such as the window probe axon sends to /api/show, refused with
404), and `served_by_model`, the replies by the model name requested.
"""

import argparse
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WRITE = re.compile(r'write "([^"]*)" to (\S+?)[,.;:]?(?:\s|$)')
RUN = re.compile(r"run: (.+)")

stats = {"tool_calls": 0, "answers": 0, "refused": 0, "model_lists": 0, "not_served": 0,
         "bad_request": 0}
served = {}  # replies by model name: which model the agents chose
lock = threading.Lock()


def count(kind):
    with lock:
        stats[kind] += 1


def text_of(message):
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def chunk(model, delta=None, finish=None, usage=None):
    body = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [] if usage else [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
    }
    if usage:
        body["usage"] = usage
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    models = ()

    def log_message(self, *args):
        pass

    def send_json(self, status, value):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/stats":
            with lock:
                self.send_json(200, {**stats, "served_by_model": dict(served)})
        elif self.path.endswith("/models"):
            count("model_lists")
            self.send_json(200, {"object": "list", "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "scripted"}
                for name in self.models]})
        else:
            self.send_json(404, {"error": {"message": f"no {self.path}", "code": "not_found"}})

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        if not self.path.endswith("/chat/completions"):
            count("not_served")
            self.send_json(404, {"error": {"message": f"no {self.path}", "code": "not_found"}})
            return
        try:
            request = json.loads(raw)
            model = request["model"]
            messages = request["messages"]
        except (ValueError, KeyError, TypeError) as e:
            count("bad_request")
            self.send_json(400, {"error": {"message": f"bad request: {e}", "code": "invalid_request"}})
            return
        if model not in self.models:
            count("refused")
            self.send_json(404, {"error": {
                "message": f"The model `{model}` does not exist or you do not have access to it.",
                "type": "invalid_request_error", "code": "model_not_found"}})
            return
        with lock:
            served[model] = served.get(model, 0) + 1
        instruction = "\n".join(text_of(m) for m in messages if m.get("role") == "user")
        prompt = len(raw) // 4
        # A follow-up (after a tool result) re-sends the conversation so far:
        # half of it counts as read from the provider's prompt cache.
        cached = prompt // 2 if any(m.get("role") == "tool" for m in messages) else 0
        usage = {"prompt_tokens": prompt, "completion_tokens": 12,
                 "prompt_tokens_details": {"cached_tokens": cached}}
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        out = [chunk(model, {"role": "assistant", "content": ""})]
        write, run = WRITE.search(instruction), RUN.search(instruction)
        if messages and messages[-1].get("role") != "tool" and (write or run):
            if write:
                name, args = "write_file", {"path": write.group(2), "content": write.group(1) + "\n"}
            else:
                name, args = "shell", {"command": run.group(1).strip()}
            call = {"index": 0, "id": "call_scripted", "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)}}
            out.append(chunk(model, {"tool_calls": [call]}))
            out.append(chunk(model, finish="tool_calls"))
            count("tool_calls")
        else:
            out.append(chunk(model, {"content": "Done: the task's file is written."}))
            out.append(chunk(model, finish="stop"))
            count("answers")
        out.append(chunk(model, usage=usage))
        out.append(b"data: [DONE]\n\n")
        self.wfile.write(b"".join(out))
        self.close_connection = True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", default=[], help="a model name served (repeatable)")
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    Handler.models = tuple(args.model or ["scripted"])
    server = ThreadingHTTPServer((args.host, 0), Handler)
    server.daemon_threads = True
    print(f"listening on http://{args.host}:{server.server_address[1]}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
