#!/bin/bash
# shellcheck disable=SC2154 # moddir, srcmods, initdir, dracutsysrootdir, dracutbasedir,
#                            kernel_cmdline, drivers, add_drivers and force_drivers come from dracut
# dracut module for gpuvm: bind GPUs in the initramfs before udev can load a GPU driver.
# Installed as /usr/lib/dracut/modules.d/90gpuvm (`make install`); see gpuvm(8).
#
# The image carries gpuvm, the vfio modules and the hooks, never the host config: the mode
# is read at boot from the real root's /etc/gpuvm/gpuvm.conf (the pre-pivot hook), so a
# change of the config (a label change) needs a reboot and no rebuild. The module therefore
# includes itself in every image while the gpuvm binary is installed, whatever the config
# says now; `omit_dracutmodules+=" gpuvm "` leaves it out.
#
# GPUVM_BINARY=PATH takes the binary from PATH instead of dracut's search (/usr/sbin, /sbin,
# /usr/bin, /bin, then /usr/local/sbin and /usr/local/bin); GPUVM_CONFIG=FILE judges by FILE
# instead of the host config, for the driver warning only (images for another host; tests).

# The host config, as the build sees it (the boot reads the root's own, not this copy).
gpuvm_conf() {
    echo "${GPUVM_CONFIG:-${dracutsysrootdir-}/etc/gpuvm/gpuvm.conf}"
}

# The mode the host config asks for now, for the driver warning: the host config's mode= (or
# the label line), then [rd.]gpuvm.mode= from dracut's kernel_cmdline=; the last one wins. It
# asks gpuvm, the one parser of the file. Empty when neither says.
gpuvm_build_mode() {
    local conf mode='' arg bin
    conf=$(gpuvm_conf)
    if [[ -f $conf ]] && bin=$(gpuvm_binary); then
        [[ -n ${GPUVM_BINARY-} ]] || bin=${dracutsysrootdir-}$bin
        if [[ -n ${GPUVM_CONFIG-} ]]; then
            mode=$("$bin" --config "$conf" config get mode 2>/dev/null) || mode=''
        else
            # the host's own file, read as the boot will read it: a link there is not
            mode=$("$bin" --root "${dracutsysrootdir:-/}" config get mode 2>/dev/null) || mode=''
        fi
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

# 0: always, while gpuvm is installed (the mode is the root's at boot, and may change any
# day without a rebuild); 1: cannot be included (no gpuvm binary).
check() {
    gpuvm_binary >/dev/null || return 1
    return 0
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
    local bin f
    bin=$(gpuvm_binary)
    inst_simple "$bin" /usr/sbin/gpuvm
    # modprobe.d files that say something about vfio (options such as disable_vga=1).
    for f in "${dracutsysrootdir-}"/etc/modprobe.d/*.conf "${dracutsysrootdir-}"/usr/lib/modprobe.d/*.conf \
        "${dracutsysrootdir-}"/lib/modprobe.d/*.conf; do
        [[ -f $f ]] && grep -q vfio "$f" && inst_simple "$f" "${f#"${dracutsysrootdir-}"}"
    done
    # libkmod in gpuvm reads the indexes; dracut's depmod writes them for the image's modules.
    inst_hook pre-udev 00 "$moddir/gpuvm-pre-udev.sh"
    # The decision from the real root's config, once dracut has mounted it on $NEWROOT.
    inst_hook pre-pivot 50 "$moddir/gpuvm-pre-pivot.sh"
    # config= on a disk: the initqueue job that waits for it. A systemd initramfs starts
    # dracut-initqueue.service only when the image asks for it, and only the build can ask:
    # systemd 257 and later make /usr (and /lib, a link into it) read-only at boot.
    inst_script "$moddir/gpuvm-resume.sh" /usr/lib/gpuvm/gpuvm-resume.sh
    dracut_need_initqueue

    gpuvm_vm_mode && gpuvm_warn_drivers
    return 0
}
