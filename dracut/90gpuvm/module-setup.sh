#!/bin/bash
# shellcheck disable=SC2154 # moddir, srcmods, initdir and dracutsysrootdir come from dracut
# dracut module for gpuvm: bind GPUs in the initramfs before udev can load a GPU driver.
# Installed as /usr/lib/dracut/modules.d/90gpuvm (`make install`); see gpuvm(8).
#
# GPUVM_BINARY=PATH takes the binary from PATH instead of $PATH (image builds in tests).

# The host config, if any, as it will be in the image.
gpuvm_conf() {
    echo "${dracutsysrootdir-}/etc/gpuvm/gpuvm.conf"
}

# Does the host config ask for a VM mode? (mode= or the label line, last one wins.)
gpuvm_conf_vm_mode() {
    local conf mode
    conf=$(gpuvm_conf)
    [[ -f $conf ]] || return 1
    mode=$(sed -n -E 's/^[[:space:]]*(mode|nvidia\.com\/gpu\.workload\.config)[[:space:]]*=[[:space:]]*["'\'']?([a-z-]+).*/\2/p' "$conf" | tail -n 1)
    [[ $mode == vm-passthrough || $mode == vm-vgpu ]]
}

gpuvm_binary() {
    if [[ -n ${GPUVM_BINARY-} ]]; then
        echo "$GPUVM_BINARY"
    else
        find_binary gpuvm
    fi
}

# 0: always (the host config asks for a VM mode); 255: only when asked for (-a gpuvm);
# 1: cannot be included (no gpuvm binary).
check() {
    [[ -x $(gpuvm_binary) ]] || return 1
    gpuvm_conf_vm_mode && return 0
    return 255
}

depends() {
    return 0
}

installkernel() {
    local variants
    # vfio_iommu_type1 is only a softdep of vfio: name it, dracut does not follow softdeps.
    hostonly='' instmods vfio vfio_iommu_type1 vfio-pci vfio-pci-core irqbypass
    # Variant vfio drivers that modules.alias offers for NVIDIA devices (nvgrace_gpu_vfio_pci).
    if [[ -f ${srcmods:?}/modules.alias ]]; then
        mapfile -t variants < <(awk '$1 == "alias" && tolower($2) ~ /^vfio_pci:v000010de/ { print $3 }' \
            "$srcmods/modules.alias" | sort -u)
        ((${#variants[@]})) && hostonly='' instmods "${variants[@]}"
    fi
    return 0
}

install() {
    local bin f conf drv
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

    if gpuvm_conf_vm_mode; then
        for drv in nouveau nova_core nvidia; do
            if find "${initdir:?}/lib/modules" "$initdir/usr/lib/modules" -name "$drv.ko*" 2>/dev/null | grep -q .; then
                dwarning "gpuvm: the image carries $drv while $(gpuvm_conf) asks for a VM mode; harmless (driver_override keeps it off the GPUs), but worth knowing"
            fi
        done
    fi
    return 0
}
