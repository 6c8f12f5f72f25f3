"""A minimal Agent Client Protocol client for bench/acp.sh: plain JSON lines
over an agent's stdio, no SDK in the way.

Starts COMMAND, sends `initialize` and `session/new`, then WARMUP + PROMPTS
`session/prompt`s one after the other in that session. For each measured
prompt it records the time from writing the request to the first
`agent_message_chunk` notification, and to the prompt's response. A line's
time is taken as soon as the read that completes it returns, before any
JSON parsing (one thread: nothing hands lines over). Permission requests
are answered with the first "allow" option; any other request from the
agent gets "method not found" (the client offers no fs or terminal
capability). After the prompts it reads VmRSS and VmHWM of the agent
process and of its whole process tree from /proc, then closes the agent's
stdin, waits for it to exit, and kills what it left running.

Prints one JSON object on stdout. Exits 1 with a message on stderr when the
agent fails a request, stops answering (TIMEOUT seconds per request) or
exits early.

Usage: acp_client.py PROMPTS WARMUP CWD -- COMMAND [ARGS...]
"""

import json
import os
import select
import subprocess
import sys
import time

TIMEOUT = 120


def fail(message):
    print(f"acp_client: {message}", file=sys.stderr)
    sys.exit(1)


def status_kb(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree(pid):
    """The process and all its descendants (from /proc/*/stat parents)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name may hold spaces; fields after its ")" are fixed.
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


class Agent:
    def __init__(self, command, stderr):
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, bufsize=0
        )
        self.out = self.proc.stdout.fileno()
        self.poll = select.poll()
        self.poll.register(self.out, select.POLLIN)
        self.pending = []  # (arrival, line) read but not handled yet
        self.partial = b""
        self.closed = False
        self.next_id = 0

    def next_line(self):
        """The next line and when its last byte was read, or None at EOF."""
        while not self.pending:
            if self.closed:
                return None
            if not self.poll.poll(TIMEOUT * 1000):
                return "timeout"
            data = os.read(self.out, 1 << 20)
            at = time.perf_counter_ns()
            if not data:
                self.closed = True
                continue
            *lines, self.partial = (self.partial + data).split(b"\n")
            self.pending.extend((at, line) for line in lines if line.strip())
        return self.pending.pop(0)

    def send(self, message):
        data = (json.dumps(message) + "\n").encode()
        sent = time.perf_counter_ns()
        self.proc.stdin.write(data)
        return sent

    def request(self, method, params):
        """Sends a request; returns (its id, when it was written)."""
        self.next_id += 1
        sent = self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id, sent

    def until_answer(self, request_id, on_update=None):
        """Reads until request_id's response; returns (result, when it arrived)."""
        while True:
            got = self.next_line()
            if got == "timeout":
                fail(f"no answer to request {request_id} within {TIMEOUT} s")
            if got is None:
                fail(f"the agent exited (status {self.proc.wait()}) before answering request {request_id}")
            at, line = got
            try:
                message = json.loads(line)
            except ValueError:
                fail(f"the agent wrote a line that is not JSON: {line[:200]!r}")
            if "method" in message and "id" in message:
                self.answer_agent(message)
            elif "method" in message:
                if on_update and message["method"] == "session/update":
                    on_update(at, message.get("params", {}).get("update", {}))
            elif message.get("id") == request_id:
                if "error" in message:
                    fail(f"request {request_id} failed: {json.dumps(message['error'])}")
                return message.get("result"), at

    def answer_agent(self, message):
        if message["method"] == "session/request_permission":
            options = message.get("params", {}).get("options", [])
            allow = next((o for o in options if o.get("kind", "").startswith("allow")), None)
            outcome = (
                {"outcome": "selected", "optionId": allow["optionId"]}
                if allow
                else {"outcome": "cancelled"}
            )
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}})
        else:
            self.send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "error": {"code": -32601, "message": f"method not found: {message['method']}"},
                }
            )


def main():
    args = sys.argv[1:]
    if len(args) < 5 or args[3] != "--":
        fail("usage: acp_client.py PROMPTS WARMUP CWD -- COMMAND [ARGS...]")
    prompts, warmup, cwd, command = int(args[0]), int(args[1]), args[2], args[4:]
    started = time.perf_counter_ns()
    agent = Agent(command, sys.stderr)
    init_id, _ = agent.request(
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False},
            "clientInfo": {"name": "axon-acp-bench", "version": "1"},
        },
    )
    init, _ = agent.until_answer(init_id)
    # MCP servers for the session, as an editor lists them (ACP_MCP_SERVERS:
    # a JSON list of {name, command, args, env}).
    servers = json.loads(os.environ.get("ACP_MCP_SERVERS", "[]"))
    new_id, _ = agent.request("session/new", {"cwd": cwd, "mcpServers": servers})
    session, ready = agent.until_answer(new_id)
    session_id = session["sessionId"]

    first_ms, turn_ms, chunks = [], [], []
    for i in range(warmup + prompts):
        seen = {"first": None, "chunks": 0}

        def on_update(at, update, seen=seen):
            if update.get("sessionUpdate") == "agent_message_chunk":
                seen["chunks"] += 1
                if seen["first"] is None:
                    seen["first"] = at

        prompt = [{"type": "text", "text": f"benchmark prompt {i}: answer in one line"}]
        prompt_id, sent = agent.request("session/prompt", {"sessionId": session_id, "prompt": prompt})
        result, done = agent.until_answer(prompt_id, on_update)
        if result.get("stopReason") != "end_turn":
            fail(f"prompt {i} ended with {json.dumps(result)}, not end_turn")
        if seen["first"] is None:
            fail(f"prompt {i} got no agent_message_chunk")
        if i >= warmup:
            first_ms.append((seen["first"] - sent) / 1e6)
            turn_ms.append((done - sent) / 1e6)
            chunks.append(seen["chunks"])

    pid = agent.proc.pid
    pids = tree(pid)
    report = {
        "agent": (init.get("agentInfo") or {}).get("name", "?"),
        "version": (init.get("agentInfo") or {}).get("version", "?"),
        "ready_ms": (ready - started) / 1e6,
        "first_chunk_ms": first_ms,
        "turn_ms": turn_ms,
        "chunks_per_prompt": sorted(chunks)[len(chunks) // 2],
        "rss_kb": status_kb(pid, "VmRSS"),
        "hwm_kb": status_kb(pid, "VmHWM"),
        "processes": len(pids),
        "tree_rss_kb": sum(status_kb(p, "VmRSS") for p in pids),
        "tree_hwm_kb": sum(status_kb(p, "VmHWM") for p in pids),
    }
    agent.proc.stdin.close()
    try:
        agent.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        agent.proc.kill()
        agent.proc.wait()
    # What the agent started and left behind (a peer's own subprocesses).
    for p in pids[1:]:
        try:
            os.kill(p, 9)
        except OSError:
            pass
    print(json.dumps(report))


if __name__ == "__main__":
    main()
