# shellcheck shell=sh
# scripts/apt-private.sh — apt with a private state, sourced by the scripts that fetch Debian
# packages without touching the system's apt configuration or its dpkg database:
# scripts/deps.sh (source packages), scripts/fetch-kernel.sh --arch/--release and scripts/sysroot.sh
# (binary packages of another architecture: no foreign architecture is ever added to dpkg).
#
#   apt_private_init DIR TYPE [ARCH [RELEASE]]
#                                      state in DIR (sources.list, lists/, cache/, an empty
#                                      dpkg status); TYPE deb-src or deb; ARCH for deb;
#                                      RELEASE: that Debian release's archive instead
#   apt_private CMD ARGS…              run apt-get/apt-cache CMD on that state
#   apt_private_sources TYPE [ARCH]    print the system's deb entries as TYPE lines
#   apt_private_release_sources TYPE ARCH RELEASE
#                                      print entries for another release (see below)
#
# The entries mirror the system's `deb` lines (deb822 .sources files and one-line lists),
# keeping their Signed-By keyrings; with none, Debian's own archive for bookworm. With a
# RELEASE (bullseye, trixie, sid, …: scripts/fetch-kernel.sh --release) they are that
# release's main suite on the system's Debian mirror and, but for sid (unstable), its
# -security suite on the system's security mirror (deb.debian.org's where the system names
# none); the package archive serves every release, the one keyring signs them.

# apt_private_sources TYPE [ARCH]: one line per URI and suite of every enabled deb entry.
apt_private_sources() {
	aps_type=$1 aps_arch=${2:-}
	{
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			awk -v type="$aps_type" -v arch="$aps_arch" '
				function reset() {
					types = uris = suites = comps = signed = archs = last = ""; enabled = 1
				}
				function flush() {
					if (enabled && types ~ /(^| )deb( |$)/ && uris != "" && suites != "" &&
					    (arch == "" || archs == "" || (" " archs " ") ~ (" " arch " "))) {
						opt = signed != "" ? "signed-by=" signed : ""
						if (arch != "")
							opt = "arch=" arch (opt != "" ? " " opt : "")
						opt = opt != "" ? "[" opt "] " : ""
						nu = split(uris, u, " "); ns = split(suites, s, " ")
						for (i = 1; i <= nu; i++)
							for (j = 1; j <= ns; j++)
								print type " " opt u[i] " " s[j] " " comps
					}
					reset()
				}
				BEGIN { reset() }
				/^[ \t]*#/ { next }
				/^[ \t]*$/ { flush(); next }
				/^[ \t]/ {
					# continuation line of a multi-line field
					val = $0; gsub(/^[ \t]+|[ \t]+$/, "", val)
					if (last == "uris") uris = uris " " val
					else if (last == "suites") suites = suites " " val
					else if (last == "components") comps = comps " " val
					next
				}
				{
					last = tolower($1); sub(/:$/, "", last)
					val = $0; sub(/^[^:]*:[ \t]*/, "", val); sub(/[ \t]+$/, "", val)
					if (last == "types") types = val
					else if (last == "uris") uris = val
					else if (last == "suites") suites = val
					else if (last == "components") comps = val
					else if (last == "signed-by" && val != "") signed = val
					else if (last == "architectures") archs = val
					else if (last == "enabled" && tolower(val) == "no") enabled = 0
				}
				END { flush() }
			' "$f"
		done
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -f "$f" ] || continue
			if [ -z "$aps_arch" ]; then
				sed -n "s/^[ \t]*deb[ \t]/$aps_type /p" "$f"
			else
				# An entry limited to other architectures ([arch=amd64]) is left out.
				sed -n -e '/^[ \t]*deb[ \t]\{1,\}\[[^]]*arch=/d' \
					-e "s/^[ \t]*deb[ \t]\{1,\}\[/$aps_type [arch=$aps_arch /p" \
					-e "s/^[ \t]*deb[ \t]\{1,\}/$aps_type [arch=$aps_arch] /p" "$f"
			fi
		done
	} | sort -u
}

# apt_private_release_sources TYPE ARCH RELEASE: RELEASE's suites (main component), on the
# mirrors and with the keyrings of the system's Debian entries.
apt_private_release_sources() {
	aprs_sys=$(apt_private_sources "$1")
	aprs_main=$(printf '%s\n' "$aprs_sys" | awk '$0 !~ /-security|-updates|-backports/ &&
		/ main/ && /\/debian\/? / { print; exit }')
	aprs_sec=$(printf '%s\n' "$aprs_sys" | awk '/-security / { print; exit }')
	aprs_mirror=$(printf '%s\n' "$aprs_main" | sed -n 's/.* \(https\{0,1\}:[^ ]*\) .*/\1/p')
	aprs_secmirror=$(printf '%s\n' "$aprs_sec" | sed -n 's/.* \(https\{0,1\}:[^ ]*\) .*/\1/p')
	aprs_key=$(printf '%s\n' "$aprs_main" | sed -n 's/.*signed-by=\([^] ]*\).*/\1/p')
	aprs_seckey=$(printf '%s\n' "$aprs_sec" | sed -n 's/.*signed-by=\([^] ]*\).*/\1/p')
	aprs_o="arch=$2${aprs_key:+ signed-by=$aprs_key}"
	echo "$1 [$aprs_o] ${aprs_mirror:-http://deb.debian.org/debian} $3 main"
	case $3 in
	sid | unstable | experimental) ;;
	*)
		aprs_o="arch=$2${aprs_seckey:+ signed-by=$aprs_seckey}"
		echo "$1 [$aprs_o] ${aprs_secmirror:-http://deb.debian.org/debian-security} $3-security main"
		;;
	esac
}

# apt_private_init DIR TYPE [ARCH [RELEASE]]: the state directory and its sources.list.
apt_private_init() {
	APT_PRIVATE_DIR=$1
	APT_PRIVATE_ARCH=${3:-}
	mkdir -p "$1/sources.list.d" "$1/lists/partial" "$1/cache/archives/partial"
	[ -f "$1/status" ] || : >"$1/status"
	if [ -n "${4:-}" ]; then
		apt_private_release_sources "$2" "${3:-amd64}" "$4" >"$1/sources.list.new"
		APT_PRIVATE_ARCH=${3:-amd64}
	else
		apt_private_sources "$2" "${3:-}" >"$1/sources.list.new"
	fi
	if ! grep -q "^$2 " "$1/sources.list.new"; then
		# Nothing usable in /etc/apt: fall back to Debian's own archive.
		o=${3:+[arch=$3] }
		for s in "http://deb.debian.org/debian bookworm" \
			"http://deb.debian.org/debian bookworm-updates" \
			"http://deb.debian.org/debian-security bookworm-security"; do
			echo "$2 $o$s main"
		done >"$1/sources.list.new"
	fi
	mv "$1/sources.list.new" "$1/sources.list"
}

# apt_private CMD ARGS…: CMD (apt-get, apt-cache) on the private state. With an architecture
# it is the only one apt knows, and the dpkg status is the state's own empty file: the host's
# installed packages neither satisfy nor conflict with anything.
apt_private() {
	ap_cmd=$1
	shift
	if [ -n "$APT_PRIVATE_ARCH" ]; then
		set -- -o APT::Architecture="$APT_PRIVATE_ARCH" \
			-o APT::Architectures="$APT_PRIVATE_ARCH" \
			-o Dir::State::status="$APT_PRIVATE_DIR/status" "$@"
	fi
	"$ap_cmd" -q \
		-o Dir::Etc::SourceList="$APT_PRIVATE_DIR/sources.list" \
		-o Dir::Etc::SourceParts="$APT_PRIVATE_DIR/sources.list.d" \
		-o Dir::State::Lists="$APT_PRIVATE_DIR/lists" \
		-o Dir::Cache="$APT_PRIVATE_DIR/cache" \
		-o APT::Sandbox::User=root "$@"
}
