#!/usr/bin/env bats
# shellcheck disable=SC2154 # $stderr and $output are set by bats' run
# The docs that the tests keep true: gpuvm(8)'s fault table (doc/faults.tsv, scripts/faults.sh).

load helpers

@test "gpuvm(8)'s fault table is doc/faults.tsv's, and every test it names is there" {
	run --separate-stderr "$TOP/scripts/faults.sh" --check
	assert_success
	assert_output --regexp '^faults: [0-9]+ tests named by doc/faults.tsv are there$'
}

@test "the fault table check fails on a test that is gone and on a page that differs" {
	tsv=$BATS_TEST_TMPDIR/faults.tsv
	page=$BATS_TEST_TMPDIR/gpuvm.8
	sed 's/groupless GPU held/a test nobody wrote/' "$TOP/doc/faults.tsv" >"$tsv"
	FAULTS_TSV=$tsv FAULTS_PAGE=$TOP/doc/gpuvm.8 run --separate-stderr "$TOP/scripts/faults.sh" --check
	assert_failure
	assert_regex "$stderr" "tests/unit/test-execute.c does not hold 'a test nobody wrote'"
	sed 's/^drivers_probe write fails\t/drivers_probe write is fine\t/' "$TOP/doc/gpuvm.8" >"$page"
	FAULTS_PAGE=$page run --separate-stderr "$TOP/scripts/faults.sh" --check
	assert_failure
	assert_regex "$stderr" "FAULTS table differs from doc/faults.tsv"
	FAULTS_PAGE=$page run "$TOP/scripts/faults.sh" --update
	FAULTS_PAGE=$page run --separate-stderr "$TOP/scripts/faults.sh" --check
	assert_success
	cmp "$page" "$TOP/doc/gpuvm.8"
}
