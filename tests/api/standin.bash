# shellcheck shell=bash
# The API stand-in (tests/api/kube-api-standin) for a bats file: one server for the file's tests.
#   setup_file:    standin_start       (certificate, server, port)
#   setup:         standin_reset       (empty store, the shipped RBAC, tokens, no faults, an
#                                       empty request log) and standin_vars (API, STORE, SERVER)
#   teardown_file: standin_stop
# and real kubectl clients against it: debian_kubectl, kubectls, kubeconfig.
# The server reads its tokens, RBAC, faults and store at each request, so a test changes them
# between calls. See tests/api/README.md.

# The mirror's ServiceAccount, as mirror/deploy/base/rbac.yaml names it, and the user of its token.
SA_USER=system:serviceaccount:gpuvm-system:gpuvm-label-mirror

# shellcheck disable=SC2034 # STORE and SERVER: for the tests that load this file
standin_vars() {
	API="$BATS_FILE_TMPDIR/api"
	STORE="$API/store"
	SERVER="https://127.0.0.1:$(cat "$API/port")"
}

# standin_start [OPTION...]: the options go to the server (--bookmark-seconds S,
# --watch-max-seconds S, --watch-history N: tests/api/README.md).
standin_start() {
	API="$BATS_FILE_TMPDIR/api"
	mkdir -p "$API"
	"$TOP/tests/api/mkcert.sh" "$API/tls"
	standin_reset
	standin_serve "$@"
}

# standin_restart: the server stopped (its connections cut) and started again on its port, with
# the store, the log and the files as they are (an API server's restart).
standin_restart() {
	local port pid
	port=$(cat "$API/port")
	pid=$(cat "$API/pid")
	kill "$pid" 2>/dev/null || true # (a test may have stopped it already)
	while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	standin_serve --port "$port" "$@"
}

# standin_serve [OPTION...]: the server, on the files of $API as they are.
standin_serve() {
	rm -f "$API/port"
	# Debian's python3, not another one the PATH may put first.
	/usr/bin/python3 "$TOP/tests/api/kube-api-standin" --dir "$API/store" --rbac "$API/rbac.yaml" \
		--tokens "$API/tokens" --cert "$API/tls/server.crt" --key "$API/tls/server.key" \
		--log "$API/requests.jsonl" --port-file "$API/port" --faults "$API/faults.json" "$@" \
		>"$API/server.log" 2>&1 3>&- &
	echo $! >"$API/pid"
	for _ in $(seq 1 200); do
		[ -s "$API/port" ] && return 0
		kill -0 "$(cat "$API/pid")" 2>/dev/null || break
		sleep 0.05
	done
	echo "the API stand-in did not start:" >&2
	cat "$API/server.log" >&2
	return 1
}

standin_stop() {
	local f="$BATS_FILE_TMPDIR/api/pid"
	[ ! -e "$f" ] || kill "$(cat "$f")" 2>/dev/null || true
	# what the server said on stderr (a trace is a bug in it): shown with a failing file
	[ ! -s "$BATS_FILE_TMPDIR/api/server.log" ] || cat "$BATS_FILE_TMPDIR/api/server.log" >&2
}

standin_reset() {
	rm -rf "$API/store" "$API/faults.json"
	mkdir -p "$API/store/api/v1/nodes"
	: >"$API/requests.jsonl"
	shipped_rbac >"$API/rbac.shipped.yaml"
	ln -sfn "$API/rbac.shipped.yaml" "$API/rbac.yaml"
	printf '%s\n' "mirror-token $SA_USER" "admin-token admin system:masters" >"$API/tokens"
	printf 'mirror-token\n' >"$API/token"
}

# shipped_rbac: the RBAC of the default install (mirror/deploy/overlays/default): the base's and
# the GPU Operator component's rules, one YAML stream.
shipped_rbac() {
	cat "$TOP/mirror/deploy/base/rbac.yaml"
	echo ---
	cat "$TOP/mirror/deploy/components/gpu-operator/rbac.yaml"
}

# rbac_without ERE: the server's RBAC becomes the shipped rules less the documents that match ERE
# (awk), which must leave some out.
rbac_without() {
	awk -v pat="$1" '
		function flush() { if (doc !~ pat) printf "%s", doc; doc = "" }
		/^---$/ { flush(); doc = "---\n"; next }
		{ doc = doc $0 "\n" }
		END { flush() }' "$API/rbac.shipped.yaml" >"$API/rbac.copy.yaml"
	! cmp -s "$API/rbac.shipped.yaml" "$API/rbac.copy.yaml" || fail "rbac_without $1: nothing left out"
	ln -sfn "$API/rbac.copy.yaml" "$API/rbac.yaml"
}

# rbac_sed SCRIPT: the server's RBAC becomes the shipped rules through sed SCRIPT, which must
# change them.
rbac_sed() {
	sed "$1" "$API/rbac.shipped.yaml" >"$API/rbac.copy.yaml"
	! cmp -s "$API/rbac.shipped.yaml" "$API/rbac.copy.yaml" || fail "rbac_sed $1: nothing changed"
	ln -sfn "$API/rbac.copy.yaml" "$API/rbac.yaml"
}

# fault JSON...: the faults the server applies from now on, each {"path", "method"?, "verb"?,
# "times"? (the first N requests only), "delay"? seconds before it answers, "code"? and
# "reason"/"message"/"details" of a Status, or "text" as the body, "headers"? of the answer;
# for a watch also "error_event" (the Status as an ERROR event), "drop_after_events" N or
# "drop_after_seconds" S (the connection cut)}: tests/api/README.md.
fault() {
	jq -s . <<<"$*" >"$API/faults.json"
}

# requests [JQ_FILTER]: the recorded requests (JSON, one a line) that match the filter.
requests() {
	jq -c "select(${1:-true})" "$API/requests.jsonl"
}

# apicurl TOKEN ARGS...: curl to the server with the file's CA and the bearer TOKEN (none: no
# header); the body on stdout, then a line with the HTTP status.
apicurl() {
	local tok=$1
	shift
	if [ "$tok" = none ]; then
		curl -sS --cacert "$API/tls/ca.crt" -w '\n%{http_code}\n' "$@"
	else
		curl -sS --cacert "$API/tls/ca.crt" -H "Authorization: Bearer $tok" -w '\n%{http_code}\n' "$@"
	fi
}

# call TOKEN METHOD PATH [CONTENT_TYPE BODY]: one request; $output is the body, $code the status.
# shellcheck disable=SC2154 # $status and $lines: bats' run sets them
call() {
	local tok=$1 m=$2 p=$3
	shift 3
	if [ $# -ge 2 ]; then
		run apicurl "$tok" -X "$m" -H "Content-Type: $1" --data-binary "$2" "$SERVER$p"
	else
		run apicurl "$tok" -X "$m" "$SERVER$p"
	fi
	[ "$status" = 0 ]
	code=${lines[${#lines[@]} - 1]}
	output=$(printf '%s\n' "$output" | sed '$d')
}

# jqc FILTER: FILTER on $output, compact.
jqc() {
	printf '%s' "$output" | jq -c "$1"
}

# status_is CODE REASON MESSAGE: the answer is the API's Status object with these (jqr:
# helpers.bash).
status_is() {
	[ "$code" = "$1" ] || { echo "code $code, not $1: $output"; return 1; }
	[ "$(jqr '"\(.kind) \(.apiVersion) \(.status) \(.code) \(.reason)"')" = "Status v1 Failure $1 $2" ]
	[ "$(jqr .message)" = "$3" ] || { echo "message: $(jqr .message)"; return 1; }
}

# The kubectl of Debian's kubernetes-client (scripts/install-packages.sh), or DEBIAN_KUBECTL,
# or, where another package owns /usr/bin/kubectl, Debian's unpacked into build/ (apt-get
# download; dpkg-deb -x: scripts/fetch-debian-kubectl.sh).
debian_kubectl() {
	if dpkg-query -W -f='${Status}\n' kubernetes-client 2>/dev/null | grep -q '^install ok installed$'; then
		dpkg-query -L kubernetes-client | grep -m 1 '/bin/kubectl$'
	elif [ -n "${DEBIAN_KUBECTL-}" ]; then
		printf '%s\n' "$DEBIAN_KUBECTL"
	else
		sh "$TOP/scripts/fetch-debian-kubectl.sh" "$TOP/build/kubernetes-client" 2>/dev/null || true
	fi
}

# kubectls: the kubectl clients to check against the stand-in, one a line: Debian's (which must
# be there: need), then the one on PATH where it is another (a newer release).
kubectls() {
	local d k
	d=$(debian_kubectl)
	[ -n "$d" ] && [ -x "$d" ] && echo "$d"
	k=$(command -v kubectl) || return 0
	if [ -z "$d" ] || [ "$(readlink -f "$k")" != "$(readlink -f "$d")" ]; then
		echo "$k"
	fi
}

# kubeconfig: $KC, the stand-in's cluster, its CA, the mirror's token (context mirror, current)
# and an admin's (system:masters).
kubeconfig() {
	KC=$BATS_TEST_TMPDIR/kubeconfig
	cat >"$KC" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: standin
  cluster:
    server: $SERVER
    certificate-authority: $API/tls/ca.crt
users:
- name: mirror
  user:
    token: mirror-token
- name: admin
  user:
    token: admin-token
contexts:
- name: mirror
  context: {cluster: standin, user: mirror}
- name: admin
  context: {cluster: standin, user: admin}
current-context: mirror
EOF
}
