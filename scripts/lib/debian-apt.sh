# Sourced, not run. Debian packages without touching the system's apt state: a private
# sources list and lists directory under a work dir, on the mirror this machine already uses.
#   apt_private_init WORKDIR [with-src]   sets APT_PRIVATE (apt-get options) and reads the lists
#   apt_private_unpack WORKDIR ROOT PKG...  downloads PKGs and unpacks them (dpkg-deb -x) into ROOT
# Callers define log() and fail().

debian_mirror() {
  local codename=$1 mirror
  mirror=${SENTINEL_DEBIAN_MIRROR:-$(
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v suite="$codename" '
      /^$/ { if (uris && suites ~ "(^| )" suite "( |$)") { print uris; exit } uris = suites = "" }
      /^URIs:/ { uris = $2 } /^Suites:/ { $1 = ""; suites = substr($0, 2) }
      END { if (uris && suites ~ "(^| )" suite "( |$)") print uris }' | head -n1
  )}
  if [ -z "$mirror" ]; then
    mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      sed -E 's/\[[^]]*\]//' | awk -v suite="$codename" '$1 == "deb" && $3 == suite { print $2; exit }')
  fi
  echo "${mirror:-http://deb.debian.org/debian}"
}

apt_private_init() {
  local work=$1 with_src=${2:-} codename mirror keyring signed=""
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  mirror=$(debian_mirror "$codename")
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [ -r "$keyring" ] && signed="[signed-by=$keyring] "
  mkdir -p "$work/apt/lists/partial"
  printf 'deb %s%s %s main\n' "$signed" "$mirror" "$codename" >"$work/apt/sources.list"
  if [ -n "$with_src" ]; then
    printf 'deb-src %s%s %s main\n' "$signed" "$mirror" "$codename" >>"$work/apt/sources.list"
  fi
  APT_PRIVATE=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$work/apt/lists" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
    -o APT::Sandbox::User=root)
  log "apt: reading $mirror $codename (private lists in $work)"
  apt-get -qq --error-on=any "${APT_PRIVATE[@]}" update ||
    fail "cannot read Debian's package lists from $mirror (set SENTINEL_DEBIAN_MIRROR to another mirror)"
}

apt_private_unpack() {
  local work=$1 root=$2 deb
  shift 2
  mkdir -p "$work/debs"
  (cd "$work/debs" && apt-get -qq "${APT_PRIVATE[@]}" download "$@")
  for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done
  rm -f "$work"/debs/*.deb
}
