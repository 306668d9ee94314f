#!/bin/bash
# shellcheck disable=SC2154 # moddir, srcmods, initdir, dracutsysrootdir, dracutbasedir,
#                            kernel_cmdline, drivers, add_drivers and force_drivers come from dracut
# dracut module for gpuvm: bind GPUs in the initramfs before udev can load a GPU driver.
# Installed as /usr/lib/dracut/modules.d/90gpuvm (`make install`); see gpuvm(8).
#
# dracut includes it by itself when the host asks for a VM mode: /etc/gpuvm/gpuvm.conf says
# mode=vm-passthrough|vm-vgpu (or the label line), or dracut's kernel_cmdline= (as in
# kernel-cmdline/*/dracut.conf) says [rd.]gpuvm.mode=vm-…; and whenever config= names where
# the host config lives (a disk the mode may change on while the image stays): in the host
# config, in dracut's kernel_cmdline=, or on the boot line as far as the build can see it
# (the running one, /proc/cmdline, when building for this host; GRUB's defaults;
# /etc/kernel/cmdline). Otherwise only when asked for (add_dracutmodules+=" gpuvm ", or
# dracut -a gpuvm).
#
# GPUVM_BINARY=PATH takes the binary from PATH instead of dracut's search (/usr/sbin, /sbin,
# /usr/bin, /bin, then /usr/local/sbin and /usr/local/bin); GPUVM_CONFIG=FILE judges by and
# installs FILE instead of the host config (images for another host; tests).

# The host config, if any, as it will be in the image.
gpuvm_conf() {
    echo "${GPUVM_CONFIG:-${dracutsysrootdir-}/etc/gpuvm/gpuvm.conf}"
}

# The mode the image will boot in, as far as the build can know: the host config's mode= (or
# the label line), then [rd.]gpuvm.mode= from dracut's kernel_cmdline= (it lands in the
# image's /etc/cmdline.d, which beats the config, as the kernel command line does); the last
# one wins. Empty when neither says. The kernel command line of the boot loader can still
# change it: the build cannot see that.
gpuvm_build_mode() {
    local conf mode='' arg
    conf=$(gpuvm_conf)
    if [[ -f $conf ]]; then
        mode=$(sed -n -E 's/^[[:space:]]*(mode|nvidia\.com\/gpu\.workload\.config)[[:space:]]*=[[:space:]]*["'\'']?([a-z-]+).*/\2/p' "$conf" | tail -n 1)
    fi
    for arg in ${kernel_cmdline-}; do
        case $arg in
        gpuvm.mode=* | rd.gpuvm.mode=*) mode=${arg#*=} ;;
        esac
    done
    echo "$mode"
}

# Where gpuvm_build_mode found the mode, for messages.
gpuvm_where() {
    local arg where=''
    [[ -f $(gpuvm_conf) ]] && where=$(gpuvm_conf)
    for arg in ${kernel_cmdline-}; do
        case $arg in
        gpuvm.mode=* | rd.gpuvm.mode=*) where="kernel_cmdline: $arg" ;;
        esac
    done
    echo "$where"
}

gpuvm_vm_mode() {
    [[ $(gpuvm_build_mode) == vm-passthrough || $(gpuvm_build_mode) == vm-vgpu ]]
}

# Where the binary is, as a path on the host ("" when there is none). dracut's PATH is only
# /usr/sbin /sbin /usr/bin /bin: a `make install` into /usr/local is looked up by hand.
gpuvm_binary() {
    local p
    if [[ -n ${GPUVM_BINARY-} ]]; then
        [[ -x $GPUVM_BINARY ]] || return 1
        echo "$GPUVM_BINARY"
        return 0
    fi
    if p=$(find_binary gpuvm) && [[ -x ${dracutsysrootdir-}$p ]]; then
        echo "$p"
        return 0
    fi
    for p in /usr/local/sbin/gpuvm /usr/local/bin/gpuvm; do
        [[ -x ${dracutsysrootdir-}$p ]] && echo "$p" && return 0
    done
    return 1
}

# config= names a disk or file for the host config, where the build can see it (see the top).
gpuvm_config_named() {
    local conf f root=${dracutsysrootdir-}
    conf=$(gpuvm_conf)
    [[ -f $conf ]] && grep -qE '^[[:space:]]*config[[:space:]]*=[[:space:]]*[^[:space:]#]' "$conf" && return 0
    [[ " ${kernel_cmdline-} " =~ [[:space:]](rd\.)?gpuvm\.config= ]] && return 0
    # The running boot's line is the next one's on a host that builds its own image.
    [[ -z $root && -r /proc/cmdline ]] && grep -qE '(^|[[:space:]])(rd\.)?gpuvm\.config=' /proc/cmdline && return 0
    for f in "$root"/etc/default/grub "$root"/etc/default/grub.d/*.cfg "$root"/etc/kernel/cmdline; do
        [[ -f $f ]] && grep -qE '(^|[[:space:]"'\''])(rd\.)?gpuvm\.config=' "$f" && return 0
    done
    return 1
}

# 0: always (the host asks for a VM mode, or config= names where the host config lives);
# 255: only when asked for (-a gpuvm); 1: cannot be included (no gpuvm binary).
check() {
    gpuvm_binary >/dev/null || return 1
    gpuvm_vm_mode && return 0
    gpuvm_config_named && return 0
    return 255
}

# dracut 108 and later (dracut-ng) ship the initqueue (/sbin/initqueue, the main loop's jobs,
# dracut-initqueue.service) as a module of its own, included only when a module names it;
# before, it is part of base and there is no such module to name.
depends() {
    local d
    for d in "${dracutbasedir:?}"/modules.d/[0-9][0-9]initqueue; do
        [[ -d $d ]] && echo initqueue
    done
    return 0
}

installkernel() {
    local variants
    # vfio_iommu_type1 is only a softdep of vfio: name it, dracut does not follow softdeps.
    hostonly='' instmods vfio vfio_iommu_type1 vfio-pci vfio-pci-core irqbypass
    # config= may name a disk (on the boot loader's command line, which the build cannot
    # see): the file systems gpuvm reads it from, ext4 and vfat (with the code page and
    # character sets Debian's vfat asks for). The disk's own driver comes as dracut's
    # hostonly mode or --add-drivers bring it.
    hostonly='' instmods ext4 vfat nls_cp437 nls_ascii nls_utf8
    # Variant vfio drivers that modules.alias offers for NVIDIA devices (nvgrace_gpu_vfio_pci).
    if [[ -f ${srcmods:?}/modules.alias ]]; then
        mapfile -t variants < <(awk '$1 == "alias" && tolower($2) ~ /^vfio_pci:v000010de/ { print $3 }' \
            "$srcmods/modules.alias" | sort -u)
        ((${#variants[@]})) && hostonly='' instmods "${variants[@]}"
    fi
    return 0
}

# Say it plainly when the image carries a driver that would take an NVIDIA GPU while the host
# asks for a VM mode. dracut runs the modules' install() in their order and installs the
# drivers named by drivers=, add_drivers= and force_drivers= (--add-drivers, dracut.conf.d)
# only after all of them: those are judged by name, the rest by what is in the image so far
# (50drm puts nouveau there).
gpuvm_warn_drivers() {
    local drv named how
    named=" ${drivers-} ${add_drivers-} ${force_drivers-} "
    named=${named//-/_}
    for drv in nouveau nova_core nvidia; do
        if [[ $named == *" $drv "* ]]; then
            how="take it out of drivers=, add_drivers= or force_drivers= (dracut.conf.d, --add-drivers)"
        elif find "${initdir:?}/lib/modules" "$initdir/usr/lib/modules" \
            \( -name "$drv.ko" -o -name "$drv.ko.*" -o -name "${drv//_/-}.ko" -o -name "${drv//_/-}.ko.*" \) \
            2>/dev/null | grep -q .; then
            how="omit_drivers+=\" $drv \" in /etc/dracut.conf.d leaves it out"
        else
            continue
        fi
        dwarning "WARNING: gpuvm: this initramfs carries $drv, a driver for NVIDIA GPUs, while the host asks for $(gpuvm_build_mode) ($(gpuvm_where)). Harmless: gpuvm's driver_override keeps $drv off the GPUs it binds. Unless a GPU that gpuvm does not select needs it, $how."
    done
}

install() {
    local bin f conf
    bin=$(gpuvm_binary)
    inst_simple "$bin" /usr/sbin/gpuvm
    conf=$(gpuvm_conf)
    [[ -f $conf ]] && inst_simple "$conf" /etc/gpuvm/gpuvm.conf
    # modprobe.d files that say something about vfio (options such as disable_vga=1).
    for f in "${dracutsysrootdir-}"/etc/modprobe.d/*.conf "${dracutsysrootdir-}"/usr/lib/modprobe.d/*.conf \
        "${dracutsysrootdir-}"/lib/modprobe.d/*.conf; do
        [[ -f $f ]] && grep -q vfio "$f" && inst_simple "$f" "${f#"${dracutsysrootdir-}"}"
    done
    # libkmod in gpuvm reads the indexes; dracut's depmod writes them for the image's modules.
    inst_hook pre-udev 00 "$moddir/gpuvm-pre-udev.sh"
    # config= on a disk: the initqueue job that waits for it. A systemd initramfs starts
    # dracut-initqueue.service only when the image asks for it, and only the build can ask:
    # systemd 257 and later make /usr (and /lib, a link into it) read-only at boot.
    inst_script "$moddir/gpuvm-resume.sh" /usr/lib/gpuvm/gpuvm-resume.sh
    dracut_need_initqueue

    gpuvm_vm_mode && gpuvm_warn_drivers
    return 0
}
