#!/usr/bin/env bash
# A release of actiond: the four Debian packages, their SHA256SUMS (signed), and a signed apt
# repository that boards install from and `apt upgrade` keeps them current with. The release
# workflow (.github/workflows/release.yml) runs it on a version tag; the nspawn stage of
# scripts/test.sh runs it to publish two versions and upgrade from one to the other.
#
#   scripts/release.sh [--no-build] [--arch "amd64 arm64 armhf armel"] [--repo DIR]
#                      [--key KEY] [--url URL] VERSION
#
#   VERSION     the version being released: Cargo.toml's (a tag v0.2.0 releases 0.2.0)
#   --no-build  take the packages already in dist/deb/ (scripts/package-deb.sh made them)
#   --arch      some architectures only (default: all four)
#   --repo DIR  the apt repository to publish into (default dist/apt); one made by an earlier
#               run gets the new version (apt sees the newest), and its state stays in
#               DIR.state (reprepro's database and settings, not to be published)
#   --key KEY   the signing key, a fingerprint or user id in gpg's keyring (GNUPGHOME);
#               default: the keyring's only secret key
#   --url URL   where DIR will be served, for the install commands it writes
#
# Output: dist/release/VERSION/ (the .deb files, SHA256SUMS and its detached signature
# SHA256SUMS.asc, RELEASE.md: the release notes with the install commands and sizes), and
# DIR: dists/stable/{Release,Release.gpg,InRelease} and the Packages lists of main for each
# architecture, pool/, actiond.asc (the public key, armored, for signed-by) and index.html
# (the install commands). The layout is Debian's tool's (reprepro), the signatures gpg's.
# Installs reprepro and gnupg with apt when they are missing, and fails loudly.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=release
. scripts/lib.sh

build=true arches="${ARCHES[*]}" repo=dist/apt key="" url=""
while [ $# -gt 0 ]; do
    case $1 in
        --no-build) build=false; shift ;;
        --arch) arches=${2:?--arch needs a list}; shift 2 ;;
        --repo) repo=${2:?--repo needs a directory}; shift 2 ;;
        --key) key=${2:?--key needs a key}; shift 2 ;;
        --url) url=${2:?--url needs an address}; shift 2 ;;
        -h|--help) sed -n '7,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1" ;;
        *) break ;;
    esac
done
[ $# -eq 1 ] || die "usage: scripts/release.sh [options] VERSION (--help)"
version=$1
in_cargo=$(cargo_version)
[ "$version" = "$in_cargo" ] \
    || die "releasing $version, but Cargo.toml says $in_cargo: bump Cargo.toml (and CHANGELOG.md) first, then tag v$in_cargo"
case $version in *[!0-9A-Za-z.+~-]*|'') die "'$version' is not a Debian version" ;; esac
url=${url:-https://OWNER.github.io/actiond}
url=${url%/}

for tool in reprepro:reprepro gpg:gnupg gpgv:gpgv sha256sum:coreutils; do
    command -v "${tool%%:*}" >/dev/null && continue
    [ "$(id -u)" -eq 0 ] || die "${tool%%:*} is missing (Debian package ${tool#*:}) and installing it needs root"
    step "apt-get install ${tool#*:}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${tool#*:}" >/dev/null \
        || die "apt-get install ${tool#*:} failed"
done

# The signing key: the one named, or the keyring's only secret key.
if [ -z "$key" ]; then
    fprs=$(gpg --batch --list-secret-keys --with-colons 2>/dev/null | awk -F: '$1 == "fpr" { print $10 }')
    case $(printf '%s\n' "$fprs" | grep -c .) in
        0) die "no secret key in gpg's keyring (${GNUPGHOME:-~/.gnupg}): import the signing key, or pass --key" ;;
        1) ;;
        *) die "several secret keys in gpg's keyring: pass --key with the fingerprint of the signing key" ;;
    esac
    # The first fpr line is the primary key's.
    key=$(printf '%s\n' "$fprs" | head -1)
fi
gpg --batch --list-secret-keys "$key" >/dev/null 2>&1 || die "no secret key '$key' in gpg's keyring"

if $build; then
    # shellcheck disable=SC2086 # a list of architectures
    bash scripts/package-deb.sh $arches
fi
debs=()
for arch in $arches; do
    deb=dist/deb/actiond_${version}_$arch.deb
    [ -f "$deb" ] || die "no $deb (scripts/package-deb.sh $arch makes it)"
    [ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || die "$deb is version $(dpkg-deb -f "$deb" Version), not $version"
    debs+=("$deb")
done

# ---------------------------------------------------------------------------------------
# The release's files

out=dist/release/$version
step "release files in $out"
rm -rf "$out"
mkdir -p "$out"
cp "${debs[@]}" "$out/"
(cd "$out" && sha256sum -- *.deb >SHA256SUMS)
gpg --batch --yes --local-user "$key" --armor --detach-sign --output "$out/SHA256SUMS.asc" "$out/SHA256SUMS"

# ---------------------------------------------------------------------------------------
# The apt repository: reprepro lays out dists/ and pool/ and signs Release (Release.gpg and
# InRelease) with the key; its database and settings stay beside the published tree.

state=${repo%/}.state
mkdir -p "$repo" "$state/conf"
cat >"$state/conf/distributions" <<EOF
Origin: actiond
Label: actiond
Suite: stable
Codename: stable
Architectures: ${ARCHES[*]}
Components: main
Description: actiond, press a button and run a command on a small Linux board
SignWith: $key
EOF
step "publishing into the apt repository $repo (signed with $key)"
rr() { reprepro --silent --basedir "$state" --outdir "$(cd "$repo" && pwd)" "$@"; }
for deb in "${debs[@]}"; do
    arch=$(dpkg-deb -f "$deb" Architecture)
    # The same version built again replaces the old bytes rather than being refused.
    rr -A "$arch" remove stable actiond >/dev/null 2>&1 || true
    rr -A "$arch" includedeb stable "$deb" || die "reprepro includedeb $deb failed"
done
rr deleteunreferenced
rr export stable
gpg --batch --yes --armor --export "$key" >"$repo/actiond.asc"

# What a board will check: InRelease and Release.gpg verify against the published key, and
# every package's checksum is in the signed lists.
keyring=$(mktemp)
trap 'rm -f "$keyring"' EXIT
gpg --batch --yes --dearmor --output "$keyring" "$repo/actiond.asc"
gpgv --keyring "$keyring" "$repo/dists/stable/InRelease" >/dev/null 2>&1 \
    || die "$repo/dists/stable/InRelease does not verify with $repo/actiond.asc"
gpgv --keyring "$keyring" "$repo/dists/stable/Release.gpg" "$repo/dists/stable/Release" >/dev/null 2>&1 \
    || die "$repo/dists/stable/Release.gpg does not verify"
for deb in "${debs[@]}"; do
    arch=$(dpkg-deb -f "$deb" Architecture)
    sum=$(sha256sum "$deb" | cut -d' ' -f1)
    grep -q "^SHA256: $sum\$" "$repo/dists/stable/main/binary-$arch/Packages" \
        || die "$deb is not in $repo/dists/stable/main/binary-$arch/Packages as built"
done

# ---------------------------------------------------------------------------------------
# The install commands (README "Install"), with the repository's address, for the release
# notes and the repository's own page.

install_commands() {
    cat <<EOF
sudo mkdir -p /etc/apt/keyrings
curl -fsSL $url/actiond.asc | sudo tee /etc/apt/keyrings/actiond.asc >/dev/null
echo "deb [signed-by=/etc/apt/keyrings/actiond.asc] $url stable main" | sudo tee /etc/apt/sources.list.d/actiond.list
sudo apt update
sudo apt install actiond
EOF
}

{
    echo "# actiond $version"
    echo
    echo "Install from the apt repository (Raspberry Pi OS, Debian, Ubuntu), and \`apt upgrade\` keeps it current:"
    echo
    echo '```sh'
    install_commands
    echo '```'
    echo
    echo "Or take the package of the board's architecture (\`dpkg --print-architecture\`) from this page, check it, and install it:"
    echo
    echo '```sh'
    echo "sha256sum --check --ignore-missing SHA256SUMS"
    echo "sudo apt install ./actiond_${version}_arm64.deb"
    echo '```'
    echo
    echo "SHA256SUMS is signed with the repository's key (\`gpg --verify SHA256SUMS.asc\`, key: $url/actiond.asc)."
    echo
    echo "| package | bytes | sha256 |"
    echo "|---|---|---|"
    for deb in "${debs[@]}"; do
        echo "| \`$(basename "$deb")\` | $(stat -c %s "$deb") | \`$(sha256sum "$deb" | cut -d' ' -f1)\` |"
    done
    changes=$(awk -v v="$version" '
        /^## / { if (found) exit; if (index($0, "## " v) == 1) { found = 1; next } }
        found' CHANGELOG.md)
    if [ -n "$changes" ]; then
        echo
        echo "## What changed"
        printf '%s\n' "$changes"
    fi
} >"$out/RELEASE.md"

{
    echo '<!doctype html><meta charset="utf-8"><title>actiond apt repository</title>'
    echo "<h1>actiond apt repository</h1><p>Version $version. On the board:</p><pre>"
    install_commands | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'
    echo "</pre><p>Packages for amd64, arm64, armhf (every Raspberry Pi on 32-bit Raspberry Pi OS) and armel.</p>"
} >"$repo/index.html"

echo
echo "release $version: $out ($(ls "$out" | tr '\n' ' '))"
echo "apt repository: $repo (serve it as $url; dists/stable signed by $key)"
