# shellcheck shell=sh
# Bad input never stops the boot. Intel IOMMU, bochs loaded after gpuvm
# (/etc/modules-load). Each bad value is an error naming its source (cmdline, or file:line)
# and key, in the kernel log and the state file's errors[]; each key then falls back to the
# next source (cmdline > host config > default), on its own.
#   cmdline  no host config; gpuvm.mode="vm passthrough" (quoted, with a blank), an empty
#            gpuvm.on_error=, an unknown key: the default mode (container) is used, so bochs
#            takes the stand-in.
#   config   a malformed host config (built here: a line without '=', a bad on_error value,
#            an unknown key, an empty key, a NUL byte, a 2000-byte line, a bad exclude value,
#            a CRLF line) whose valid lines ask for vm-passthrough of 1234:1111, and on the
#            command line gpuvm.mode=passthrough, an empty gpuvm.ids= and rd.gpuvm.on_error
#            without a value: mode and ids come from the config's valid lines, on_error
#            from the default; the stand-in is bound to vfio-pci.
e2e_need_gpuvm
e2e_image --gpuvm "$E2E_GPUVM" --load bochs \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
e2e_boot --log cmdline --iommu intel --gpu vga \
	--append 'gpuvm.mode="vm passthrough" gpuvm.ids=1234:1111 gpuvm.on_error= gpuvm.frobnicate=1'
e2e_guest_done
e2e_fact_is vga.driver bochs-drm
e2e_fact_is vga.override '(null)'
e2e_state_is .mode container
e2e_state_is .mode_source default
e2e_state_is .settings.ids.source cmdline
e2e_state_is .settings.on_error.source default
e2e_state_match '.errors[]' "cmdline: mode: invalid value 'vm passthrough'.*using the default value"
e2e_state_match '.errors[]' "cmdline: on_error: invalid value ''"
e2e_state_match '.warnings[]' "unknown key 'gpuvm.frobnicate'"
e2e_reject 'printk: gpuvm: [0-9]+ output lines suppressed due to ratelimiting' \
	'the kernel dropped gpuvm kernel log lines (devkmsg rate limit)'
e2e_expect "^@dmesg .*gpuvm: cmdline: mode: invalid value 'vm passthrough'" \
	'the bad gpuvm.mode= is not in the kernel log'
e2e_expect '^@dmesg .*gpuvm: container: 1 GPU in place for the host driver, 0 failed' \
	'no gpuvm summary line in the kernel log'

conf=$E2E_OUT/$E2E_NAME.conf
{
	echo '# malformed on purpose (tests/e2e/scenarios/gpuvm-bad-input.sh)' # 1
	echo 'mode=vm-passthrough'                                          # 2
	echo 'ids=1234:1111'                                                # 3
	echo 'this line has no equals sign'                                 # 4
	echo 'on_error=sometimes'                                           # 5
	echo 'frobnicate=yes'                                               # 6
	echo '=novalue'                                                     # 7
	printf 'ids=1af4:1050\000garbage\n'                                 # 8
	printf 'host_driver=%05000d\n' 0                                    # 9: past CONFIG_LINE_MAX
	echo 'exclude=not-an-address'                                       # 10
	printf 'nvswitch=vm\r\n'                                            # 11
} >"$conf"
e2e_image --as config --gpuvm "$E2E_GPUVM" --load bochs --config "$conf" \
	--add "$E2E_GUEST/gpuvm-check.sh:/init.d/50-gpuvm-check.sh"
e2e_boot --log config --iommu intel --gpu vga \
	--append 'gpuvm.mode=passthrough gpuvm.ids= rd.gpuvm.on_error'
e2e_guest_done
e2e_fact_is vga.driver vfio-pci
e2e_state_is .result ok
e2e_state_is .mode vm-passthrough
e2e_state_is .mode_source /etc/gpuvm/gpuvm.conf:2
e2e_state_is .settings.ids.value 1234:1111
e2e_state_is .settings.ids.source /etc/gpuvm/gpuvm.conf:3
e2e_state_is .settings.on_error.value hold
e2e_state_is .settings.on_error.source default
e2e_state_is .settings.exclude.source default
e2e_state_is .settings.nvswitch.value vm
e2e_state_is .settings.nvswitch.source /etc/gpuvm/gpuvm.conf:11
e2e_state_is "$E2E_JQ_VGA | .driver_after" vfio-pci
for re in \
	"cmdline: mode: invalid value 'passthrough'.*using the /etc/gpuvm/gpuvm.conf:2 value" \
	"cmdline: ids: invalid value ''.*using the /etc/gpuvm/gpuvm.conf:3 value" \
	"rd.gpuvm.on_error: no value" \
	'/etc/gpuvm/gpuvm.conf:4: expected KEY=VALUE' \
	"/etc/gpuvm/gpuvm.conf:5: on_error: invalid value 'sometimes'.*using the default value" \
	'/etc/gpuvm/gpuvm.conf:7: invalid key' \
	'/etc/gpuvm/gpuvm.conf:8: NUL byte' \
	'/etc/gpuvm/gpuvm.conf:9: line too long' \
	"/etc/gpuvm/gpuvm.conf:10: exclude: invalid value 'not-an-address'"; do
	e2e_state_match '.errors[]' "$re"
	e2e_expect "^@dmesg .*gpuvm: .*$re" "not in the kernel log: /$re/"
done
e2e_state_match '.warnings[]' "/etc/gpuvm/gpuvm.conf:6: unknown key 'frobnicate'"
# 12 lines in a row: more than the kernel lets one opener of /dev/kmsg write in 5 s (a burst of
# 10) under the default printk.devkmsg=ratelimit; the lines dropped are the last ones, gpuvm's
# decision and summary.
e2e_reject 'printk: gpuvm: [0-9]+ output lines suppressed due to ratelimiting' \
	'the kernel dropped gpuvm kernel log lines (devkmsg rate limit)'
e2e_expect '^@dmesg .*gpuvm: vm-passthrough: 1 GPU and 0 companion functions on vfio-pci, 0 failed' \
	'no gpuvm summary line in the kernel log'
