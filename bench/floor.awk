# SPDX-License-Identifier: MIT
# floor.awk: the syscall floor of one gpuvm run, from its trace.
#
#   strace -ff -y -o PREFIX gpuvm ...;  awk -f bench/floor.awk PREFIX.*
#
# The floor is the fewest syscalls that fetch every piece of information the run used and
# make every change it made, each once, with plain synchronous calls:
#   - a file read (uevent, driver_override, cpuinfo, an index ...): open + read + close = 3;
#     one larger than 64 KiB (/proc/bus/pci/devices of a large node), read to its end with
#     a 64 KiB buffer: 3 + ceil(bytes / 65536), as a listing
#   - an absent path (a failed open, a failed existence test): 1
#   - a symlink read (iommu_group ...): readlink = 1
#   - an existence test (faccessat, stat) of a path not also opened: 1
#   - a directory listing: open + getdents with a 64 KiB buffer + the empty getdents that
#     says "end" + close = 3 + ceil(bytes / 65536); a directory opened only as a dirfd: 1
#   - a write (driver_override, unbind, drivers_probe, the state file): open + write + close
#     = 3 each, not deduplicated; a rename, a created directory: 1 each
#   - one write per output stream used (stdout, stderr)
#   - the process itself: execve, arch_prctl, set_tid_address (musl's start) and exit_group = 4
# Each file is closed on its own here; gpuvm closes its uevent descriptors 64 at a time
# (close_range), so its count can be under the floor.
# Costs outside the floor: memory (brk, mmap, munmap), fcntl, fstat, repeated reads of the
# same path, fsync (on /run, a tmpfs at boot, it does nothing), and the writer process that
# bounds each write in time (socketpair, fork, its stdio and close_range, the request and
# the answer on its socket, wait4).
#
# Output: one line of key=value; with -v list=1, then one line "syscall NAME COUNT" per
# syscall name (unsorted). total counts every syscall of every process (the forked
# writer too), the same as strace -f -c. uevent counts the distinct per-function reads,
# the part of the floor that grows with the number of functions; iommu_group the links
# read (those of the devices that matter: the members of their groups come from each
# group's listing).

function full(dir, rel) {
	if (rel ~ /^\//)
		return rel
	return dir "/" rel
}

# The path strace -y prints after a file descriptor: "3</tmp/x>" -> "/tmp/x".
function fdpath(s,   i, j) {
	i = index(s, "<")
	j = index(s, ">")
	if (i == 0 || j <= i)
		return ""
	return substr(s, i + 1, j - i - 1)
}

# The first double-quoted string of the line (a path argument).
function qstr(s,   i, rest, j) {
	i = index(s, "\"")
	if (i == 0)
		return ""
	rest = substr(s, i + 1)
	j = index(rest, "\"")
	return substr(rest, 1, j - 1)
}

# The return part: the text after the last " = ".
function ret(s,   i, r) {
	r = s
	while ((i = index(r, ") = ")) > 0)
		r = substr(r, i + 4)
	return r
}

FNR == 1 {
	ismain = ($0 ~ /^execve\(/)
}

/^(\+\+\+|---)/ { next }

{
	name = $0
	sub(/\(.*/, "", name)
	if (name !~ /^[a-z_0-9]+$/)
		next
	total++
	calls[name]++
	r = ret($0)
	failed = (r ~ /^-1 /)
}

name == "execve" || name == "arch_prctl" || name == "set_tid_address" || name == "exit_group" {
	if (ismain)
		fixed++
	next
}

name == "open" || name == "openat" {
	if (name == "openat") {
		split($0, a, ",")
		dir = fdpath(a[1])
	} else {
		dir = ""
	}
	rel = qstr($0)
	if (rel == "/dev/null")
		next
	if (failed) {
		absent[full(dir, rel)] = 1
		next
	}
	p = fdpath(r)
	if ($0 ~ /O_DIRECTORY/)
		dirs[p] = 1
	else if ($0 ~ /O_WRONLY|O_RDWR|O_CREAT/)
		writes++
	else
		files[p] = 1
	next
}

name == "readlink" || name == "readlinkat" {
	split($0, a, ",")
	dir = name == "readlinkat" ? fdpath(a[1]) : ""
	links[full(dir, qstr($0))] = 1
	next
}

name ~ /^(access|faccessat|faccessat2|stat|lstat|newfstatat|statx)$/ {
	split($0, a, ",")
	dir = name ~ /at|statx/ ? fdpath(a[1]) : ""
	p = full(dir, qstr($0))
	if (failed)
		absent[p] = 1
	else
		checks[p] = 1
	next
}

name == "read" && $0 ~ /^read\([0-9]+</ {
	split($0, a, ",")
	rbytes[fdpath(a[1])] += r + 0
	next
}

name == "getdents64" || name == "getdents" {
	split($0, a, ",")
	p = fdpath(a[1])
	dbytes[p] += r + 0
	next
}

name == "mkdir" || name == "mkdirat" {
	if (!failed)
		mkdirs++
	next
}

name ~ /^rename/ {
	renames++
	next
}

(name == "write" || name == "writev") && ismain && $0 ~ /^writev?\([12]</ {
	streams[substr($0, index($0, "(") + 1, 1)] = 1
	next
}

END {
	nf = nu = na = nl = nc = nd = dcalls = ns = ni = big = 0
	for (p in files) {
		nf++
		if (p ~ /\/uevent$/)
			nu++
		if (rbytes[p] > 65536)
			big += int((rbytes[p] + 65535) / 65536)
	}
	for (p in absent)
		if (!(p in files) && !(p in dirs) && !(p in links))
			na++
	for (p in links) {
		nl++
		if (p ~ /\/iommu_group$/)
			ni++
	}
	for (p in checks)
		if (!(p in files) && !(p in dirs) && !(p in absent) && !(p in links))
			nc++
	for (p in dirs) {
		nd++
		if (p in dbytes)
			dcalls += 3 + int((dbytes[p] + 65535) / 65536)
		else
			dcalls += 1
	}
	for (s in streams)
		ns++
	floor = fixed + 3 * nf + big + na + nl + nc + dcalls + 3 * writes + mkdirs + renames + ns
	printf "total=%d floor=%d uevent=%d iommu_group=%d files=%d absent=%d links=%d " \
	       "checks=%d dirs=%d dir_calls=%d writes=%d mkdirs=%d renames=%d streams=%d fixed=%d " \
	       "fork=%d\n", total, floor, nu, ni, nf, na, nl, nc, nd, dcalls, writes, mkdirs,
	       renames, ns, fixed, calls["fork"] + calls["clone"] + calls["vfork"]
	if (list)
		for (s in calls)
			printf "syscall %s %d\n", s, calls[s]
}
