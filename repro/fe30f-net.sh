#!/bin/sh
# The LAN the fe30f browser probes need, on this machine (root): a veth pair with an address
# for the board (10.98.0.1, fd98:30f::1) and one for a hostile site (10.98.0.2), and their
# names in /etc/hosts between "# fe30f begin" and "# fe30f end". `fe30f-net.sh down` removes
# both. Then: node repro/fe30f-browser.cjs
set -e
case "${1:-up}" in
up)
    ip link add fe30f0 type veth peer name fe30f1
    ip addr add 10.98.0.1/24 dev fe30f0
    ip addr add 10.98.0.2/24 dev fe30f1
    ip -6 addr add fd98:30f::1/64 dev fe30f0 nodad
    ip -6 addr add fd98:30f::2/64 dev fe30f1 nodad
    ip link set fe30f0 up
    ip link set fe30f1 up
    printf '# fe30f begin\n10.98.0.1 pi.local\nfd98:30f::1 pi6.local\n10.98.0.2 evil.fe30f.test\n# fe30f end\n' >>/etc/hosts
    ;;
down)
    sed -i '/^# fe30f begin$/,/^# fe30f end$/d' /etc/hosts
    ip link del fe30f0 2>/dev/null || true
    ;;
esac
