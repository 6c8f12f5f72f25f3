# Sourced by the benchmark scripts: a scratch folder `$work` and the
# background processes listed in `pids`, all gone when the script exits.
work=$(mktemp -d "${WORK_PARENT:-${TMPDIR:-/tmp}}/axon-bench.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The Claude Code peer for agent-level comparisons: Zed's ACP adapter for
# Claude Code (the agent SDK's bundled Claude Code underneath), pinned,
# installed with npm into bench/out/peers (not committed).
claude_acp_package=@zed-industries/claude-agent-acp
claude_acp_version=0.23.1
claude_acp_peers=$PWD/bench/out/peers
# Installs it once; returns non-zero (with $peer_note set) when it cannot.
install_claude_acp() {
  if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
    peer_note="skipped: node and npm are needed for $claude_acp_package"
    return 1
  fi
  [ "$(cat "$claude_acp_peers/.stamp" 2>/dev/null)" = "$claude_acp_package@$claude_acp_version" ] && return 0
  if ! (
    rm -rf "$claude_acp_peers" && mkdir -p "$claude_acp_peers" && cd "$claude_acp_peers" &&
      echo '{"private": true}' > package.json &&
      npm install --no-audit --no-fund --loglevel=error --save-exact \
        "$claude_acp_package@$claude_acp_version" > /dev/null &&
      echo "$claude_acp_package@$claude_acp_version" > .stamp
  ); then
    peer_note="skipped: npm could not install $claude_acp_package@$claude_acp_version"
    return 1
  fi
}
