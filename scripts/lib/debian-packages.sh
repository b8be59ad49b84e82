# Sourced by scripts/{ironic,keystone,neutron}-standalone.sh: installing Debian's OpenStack packages for the test
# suites without letting any packaged daemon start. The caller defines PACKAGES (package names), REQUIRED (files
# the packages must provide), and log/die.

pkg_installed() { [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]; }

missing_packages() {
  local p
  for p in "${PACKAGES[@]}"; do pkg_installed "$p" || echo "$p"; done
}

all_binaries() {
  local b
  for b in "${REQUIRED[@]}"; do [[ -e $b ]] || return 1; done
}

# Installs what is missing of PACKAGES; returns 1 (having logged why) when there was nothing to install. Parallel
# test workers may all ask at once: one installs, the others wait on the lock and find it done; the three scripts
# share one lock file, as they share dpkg's own lock. A policy-rc.d exiting 101 keeps every packaged daemon down
# while it installs (each package ships an init script that would start with /etc's config on the default port).
install_missing_packages() {
  local missing
  missing=$(missing_packages | tr '\n' ' ')
  if [[ -z "${missing// /}" ]] && all_binaries; then
    log "already installed"
    return 1
  fi
  [[ $(id -u) -eq 0 ]] || die "installing needs root (missing: $missing)"
  command -v apt-get >/dev/null || die "no apt-get: install by hand: $missing"
  exec 9>/var/lock/leasehold-ironic-install.lock
  flock -w 900 9 || die "timed out waiting for another install"
  missing=$(missing_packages | tr '\n' ' ')
  if [[ -z "${missing// /}" ]] && all_binaries; then
    log "installed meanwhile by another process"
    return 1
  fi
  export DEBIAN_FRONTEND=noninteractive

  local p need_update=0
  for p in $missing; do
    if ! apt-cache show "$p" >/dev/null 2>&1; then need_update=1; fi
  done
  if [[ $need_update -eq 1 ]]; then
    log "apt-get update"
    apt-get update -q >&2
  fi

  local created_policy=0
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    created_policy=1
  fi
  local rc=0
  log "apt-get install $missing"
  # shellcheck disable=SC2086
  apt-get install -y -q --no-install-recommends $missing >&2 || rc=$?
  if [[ $created_policy -eq 1 ]]; then rm -f /usr/sbin/policy-rc.d; fi
  [[ $rc -eq 0 ]] || die "apt-get install failed ($rc)"
  return 0
}

# A packaged daemon that started anyway (a machine without policy-rc.d support): stopped and disabled.
stop_packaged_service() {
  local svc=$1
  if command -v systemctl >/dev/null && systemctl is-active --quiet "$svc" 2>/dev/null; then
    log "stopping packaged $svc (systemd)"
    systemctl stop "$svc" >&2 || true
    systemctl disable "$svc" >&2 2>/dev/null || true
  elif [[ -x /etc/init.d/$svc ]] && "/etc/init.d/$svc" status >/dev/null 2>&1; then
    log "stopping packaged $svc (init.d)"
    "/etc/init.d/$svc" stop >&2 || true
  fi
}
