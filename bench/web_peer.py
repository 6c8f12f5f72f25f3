"""The peer of bench/web.sh: the usual way to put a streaming chat panel in a
browser, a Gradio ChatInterface, streaming from the same scripted model as
`axon web` (OpenAI's chat completions wire format, read with the standard
library only, so nothing but Gradio itself is measured beside axon).

The chat function sends the conversation to MODEL_URL/v1/chat/completions
with `stream: true`, reads the Server-Sent Events line by line and yields
the text accumulated so far after every piece (what ChatInterface expects of
a streaming function), exactly once per piece the model sends.

Prints the page's address (`http://127.0.0.1:PORT/`) as its first stdout
line once it serves, then serves until killed. Server-side rendering (which
would start a Node process beside Python) and analytics are off; the theme
is Gradio's default.

Usage: web_peer.py MODEL_URL
"""

import json
import os
import socket
import sys
import urllib.request

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import gradio as gr  # noqa: E402  (after the environment it reads)

MODEL_URL = sys.argv[1].rstrip("/") if len(sys.argv) > 1 else sys.exit("usage: web_peer.py MODEL_URL")


def messages_of(message, history):
    """The OpenAI messages for this prompt: the history Gradio keeps
    (role/content dicts), then the new user message."""
    messages = []
    for item in history:
        content = item.get("content")
        if isinstance(content, list):  # Gradio 6 may keep content as parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        messages.append({"role": item.get("role", "user"), "content": content or ""})
    messages.append({"role": "user", "content": message})
    return messages


def chat(message, history):
    body = json.dumps({"model": "scripted", "stream": True, "messages": messages_of(message, history)})
    request = urllib.request.Request(
        MODEL_URL + "/v1/chat/completions",
        data=body.encode(),
        headers={"content-type": "application/json", "authorization": "Bearer sk-bench"},
    )
    text = ""
    with urllib.request.urlopen(request, timeout=300) as response:
        for raw in response:
            line = raw.decode("utf-8").strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            piece = json.loads(data)["choices"][0]["delta"].get("content")
            if piece:
                text += piece
                yield text


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    demo = gr.ChatInterface(chat, title="peer")
    _, url, _ = demo.launch(
        server_name="127.0.0.1",
        server_port=free_port(),
        prevent_thread_lock=True,
        quiet=True,
        ssr_mode=False,
        share=False,
    )
    print(url, flush=True)
    demo.block_thread()
