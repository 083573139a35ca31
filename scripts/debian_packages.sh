# Sourced by the install scripts: Debian packages, and the deb-src entry that `apt-get source`
# needs. The sourcing script defines log() and sudo_cmd (empty, or sudo).

# Installs those of the given Debian packages that are not installed yet.
install_missing_debian_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# A deb-src entry derived from the machine's own Debian sources, so `apt-get source` works.
enable_debian_sources() {
  local src=/etc/apt/sources.list.d/debian.sources
  local out=/etc/apt/sources.list.d/tessera-deb-src.sources
  [ -f "$out" ] && return 0
  [ -f /etc/apt/sources.list.d/tessera-deb-src.list ] && return 0
  if [ -f "$src" ]; then
    sed 's/^Types: deb$/Types: deb-src/' "$src" | "${sudo_cmd[@]}" tee "$out" >/dev/null
  elif [ -f /etc/apt/sources.list ]; then
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list | "${sudo_cmd[@]}" tee /etc/apt/sources.list.d/tessera-deb-src.list >/dev/null
  else
    log "no Debian sources file found; cannot fetch StarPU's source package"; exit 1
  fi
  "${sudo_cmd[@]}" apt-get update -qq
}
