#!/bin/sh
# The NVIDIA block of a pci.ids, with that file's header (version, date, licence): what
# gpuvm kubevirt reads from /usr/share/gpuvm/pci.ids to name devices as NVIDIA's sandbox
# device plugin does, which reads the pci.ids in its own image.
#   scripts/pciids-nvidia.sh PCI.IDS > /usr/share/gpuvm/pci.ids
# Take PCI.IDS from the plugin's image (its /usr/pci.ids, see gpuvm(8)), or any pci.ids.
# The block is what the plugin reads: from the first line that starts with 10de to the
# first line that starts with neither a tab nor '#'. A header that already says where its
# block came from (a file this script or scripts/pciids-ship.sh made, as the packages ship
# it) is kept as it is: such a file comes out byte for byte.
set -eu
ids=${1:?usage: scripts/pciids-nvidia.sh PCI.IDS}
awk -v src="$ids" '
	head && /^#/ { if (/^#\tThe NVIDIA block only, by gpuvm'"'"'s /) cut = 1; print; next }
	head { head = 0; if (!cut) { print "#"; print "#\tThe NVIDIA block only, by gpuvm'"'"'s scripts/pciids-nvidia.sh from " src "." } print "" }
	!inv && /^10de/ { inv = 1; found = 1; print; next }
	inv && /^(\t|#)/ { print; next }
	inv { exit }
	END { if (!found) { print "pciids-nvidia.sh: no 10de in " src > "/dev/stderr"; exit 1 } }
' head=1 "$ids"
