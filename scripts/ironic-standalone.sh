#!/usr/bin/env bash
# Starts and stops a real, standalone OpenStack Ironic (Debian 12's packages) for integration tests:
# one process (API + conductor, rpc_transport = none), SQLite, the fake-hardware driver; no Keystone, or a
# Keystone it validates tokens against (--auth keystone, e.g. scripts/keystone-standalone.sh's).
# Facts behind every setting: shared/notes/ironic-standalone.md, shared/notes/openstack-lab.md (section 4).
#
#   scripts/ironic-standalone.sh install
#   scripts/ironic-standalone.sh start DATA_DIR [--port N] [--auth noauth|http_basic|keystone] [--user U --password P]
#                                               [--keystone-url URL --keystone-user U --keystone-password P]
#                                               [--keystone-project service]
#                                               [--neutron-network NET [--neutron-interface public|internal]
#                                                [--neutron-url URL]]
#                                               [--console-ports A:B] [--fake-delays 'power_delay=0.1,deploy_delay=0.5,1']
#                                               [--timeout SECONDS]
#   scripts/ironic-standalone.sh stop DATA_DIR
#   scripts/ironic-standalone.sh status DATA_DIR
#
# --auth keystone: Ironic's keystonemiddleware validates every request's X-Auth-Token against the Keystone v3 root
# URL as the service user U (it needs the roles admin and service on project `service`, created beforehand);
# Keystone must be up before `start`, which waits until that user's token lists fake-hardware.
# The Keystone password may come from $IRONIC_KEYSTONE_PASSWORD instead of --keystone-password (command lines are
# visible to every process).
# --neutron-network NET: the `neutron` network interface is enabled beside noop and flat (noop stays the default; a
# node asks for it with network_interface = neutron), with NET (a Neutron network name or uuid; it must exist in
# Neutron before a node with that interface is cleaned or deployed) as its cleaning and provisioning network. Ironic
# reaches Neutron as the --keystone-* service user (under any --auth), found in the catalog (type network, interface
# --neutron-interface, default public) or at --neutron-url. Facts: shared/notes/openstack-lab.md (section 5).
# `stop` keeps DATA_DIR (its SQLite database, nodes and all): `start` on it again (same --port and --auth) resumes
# the same Ironic, e.g. to test a client against an Ironic that goes away for a while. Remove DATA_DIR to discard it.
# `start` prints the endpoint URL (e.g. http://127.0.0.1:6385) as its last stdout line. Everything else goes to
# stderr. Exit codes: 0 ok; 1 failure; 2 usage; `status` exits 3 when Ironic is not running.
set -euo pipefail

# Debian's interpreter: the python3 on PATH may be pyenv's, without Ironic's modules.
PY=/usr/bin/python3
PACKAGES=(ironic-api ironic-conductor python3-ironicclient python3-openstackclient socat ipmitool)
REQUIRED=(/usr/bin/ironic)

log() { printf '[ironic-standalone] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
usage() { sed -n '6,32p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# shellcheck source=lib/debian-packages.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-packages.sh"

# ---------------------------------------------------------------------------------------------------- install
cmd_install() {
  install_missing_packages || return 0
  # If a packaged service started anyway, stop it so port 6385 stays free.
  local svc
  for svc in ironic-api ironic-conductor; do stop_packaged_service "$svc"; done
  # Packaged daemons run from /usr/bin/ironic-api / ironic-conductor with the packaged config, never ours.
  local pid
  for pid in $(pgrep -f '/usr/bin/ironic-(api|conductor)' || true); do
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q '/etc/ironic/'; then
      log "killing packaged daemon pid $pid"
      kill "$pid" 2>/dev/null || true
    fi
  done
  [[ -x /usr/bin/ironic ]] || die "/usr/bin/ironic missing after install"
  log "installed"
}

# ---------------------------------------------------------------------------------------------------- helpers
# shellcheck source=lib/pid-files.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/pid-files.sh"

# Is PID alive and an Ironic started with this data dir's config?
is_our_ironic() {
  local pid=$1 conf=$2
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$conf"
}

is_socat() {
  local pid=$1
  [[ -r /proc/$pid/comm ]] && [[ "$(cat "/proc/$pid/comm")" == socat ]]
}

http_probe() {
  # Prints the HTTP status of GET URL (000 on connection failure) and the body to $2.
  local url=$1 out=$2
  shift 2
  local code
  code=$(curl -s -o "$out" -w '%{http_code}' --max-time 5 "$@" "$url" 2>/dev/null) || true
  echo "${code:-000}"
}

# --------------------------------------------------------------------------------------------------- start
cmd_start() {
  [[ $# -ge 1 ]] || usage
  local data
  data=$(abs_dir "$1")
  shift
  local port=6385 auth=noauth user="" password="" console_ports="" fake_delays="" timeout=60
  local ks_url="" ks_user="" ks_password=${IRONIC_KEYSTONE_PASSWORD:-} ks_project=service
  local neutron_network="" neutron_interface=public neutron_url=""
  while [[ $# -gt 0 ]]; do
    case $1 in
      --port) port=${2:?}; shift 2 ;;
      --auth) auth=${2:?}; shift 2 ;;
      --user) user=${2:?}; shift 2 ;;
      --password) password=${2:?}; shift 2 ;;
      --keystone-url) ks_url=${2:?}; shift 2 ;;
      --keystone-user) ks_user=${2:?}; shift 2 ;;
      --keystone-password) ks_password=${2:?}; shift 2 ;;
      --keystone-project) ks_project=${2:?}; shift 2 ;;
      --neutron-network) neutron_network=${2:?}; shift 2 ;;
      --neutron-interface) neutron_interface=${2:?}; shift 2 ;;
      --neutron-url) neutron_url=${2:?}; shift 2 ;;
      --console-ports) console_ports=${2:?}; shift 2 ;;
      --fake-delays) fake_delays=${2:?}; shift 2 ;;
      --timeout) timeout=${2:?}; shift 2 ;;
      *) log "unknown option $1"; usage ;;
    esac
  done
  [[ $port =~ ^[0-9]+$ ]] || die "bad --port $port"
  case $auth in
    noauth) ;;
    http_basic) [[ -n $user && -n $password ]] || die "--auth http_basic needs --user and --password" ;;
    keystone)
      [[ -n $ks_url && -n $ks_user && -n $ks_password ]] ||
        die "--auth keystone needs --keystone-url, --keystone-user and --keystone-password"
      [[ $ks_url =~ ^https?://[^[:space:]]+$ ]] || die "bad --keystone-url $ks_url (the v3 root, e.g. http://127.0.0.1:5000/v3)"
      ks_url=${ks_url%/}
      ;;
    *) die "bad --auth $auth (noauth | http_basic | keystone)" ;;
  esac
  if [[ -n $neutron_network ]]; then
    [[ -n $ks_url && -n $ks_user && -n $ks_password ]] ||
      die "--neutron-network needs --keystone-url, --keystone-user and --keystone-password (Ironic's credentials for Neutron)"
    [[ $ks_url =~ ^https?://[^[:space:]]+$ ]] || die "bad --keystone-url $ks_url (the v3 root, e.g. http://127.0.0.1:5000/v3)"
    ks_url=${ks_url%/}
    [[ $neutron_network =~ ^[A-Za-z0-9_.-]+$ ]] || die "bad --neutron-network $neutron_network"
    [[ $neutron_interface == public || $neutron_interface == internal ]] || die "bad --neutron-interface $neutron_interface"
    [[ -z $neutron_url || $neutron_url =~ ^https?://[^[:space:]]+$ ]] || die "bad --neutron-url $neutron_url"
  fi
  # Console ports: a 100-port range per API port by default, so parallel instances rarely share one.
  if [[ -z $console_ports ]]; then
    local base=$((20000 + (port % 400) * 100))
    console_ports="$base:$((base + 99))"
  fi
  [[ $console_ports =~ ^[0-9]+:[0-9]+$ ]] || die "bad --console-ports $console_ports (A:B)"
  [[ -x /usr/bin/ironic ]] || die "Ironic is not installed: run '$0 install' first"

  local probe_token=""
  if [[ $auth == keystone ]]; then
    # Wrong credentials or a Keystone that is down fail here, before Ironic starts; the token also lets the
    # readiness probe below see the conductor (without one every call is 401 long before it is ready).
    probe_token=$(keystone_token "$ks_url" "$ks_user" "$ks_password" "$ks_project") ||
      die "no token from $ks_url for $ks_user in project $ks_project (see above)"
  fi

  local conf=$data/ironic.conf
  if pid=$(read_pid "$data/ironic.pid") && is_our_ironic "$pid" "$conf"; then
    die "already running (pid $pid) for $data: stop it first"
  fi

  mkdir -p "$data/log" "$data/tmp" "$data/lock" "$data/etc/policy.d" "$data/console-pids"
  : >"$data/etc/policy.yaml"
  echo "$console_ports" >"$data/console-ports"

  local auth_lines="auth_strategy = $auth"
  if [[ $auth == http_basic ]]; then
    # bcrypt cost 4 (the minimum): Ironic checks the hash on every request, and at the default cost of 12 that
    # is ≈ 250 ms per request. A test password needs no key stretching.
    local hash
    if "$PY" -c 'import bcrypt' 2>/dev/null; then
      hash=$(IRONIC_PW="$password" "$PY" -c \
        'import bcrypt, os; print(bcrypt.hashpw(os.environ["IRONIC_PW"].encode(), bcrypt.gensalt(rounds=4)).decode())')
    elif command -v htpasswd >/dev/null; then
      hash=$(htpasswd -nbB -C 4 "$user" "$password" | head -n1 | cut -d: -f2-)
    else
      die "no bcrypt: need Debian's python3-bcrypt (comes with ironic) or htpasswd from apache2-utils"
    fi
    printf '%s:%s\n' "$user" "$hash" >"$data/htpasswd"
    chmod 600 "$data/htpasswd"
    auth_lines+=$'\n'"http_basic_auth_user_file = $data/htpasswd"
  fi

  local keystone_section=""
  if [[ $auth == keystone ]]; then
    [[ $ks_password != *$'\n'* ]] || die '--keystone-password must be one line'
    # keystonemiddleware validates each request's token as this service user (≈ 20 ms per new token with
    # Keystone's cache on) and caches a validation in-process for token_cache_time (300 s by default), as a
    # production Ironic without memcached does.
    keystone_section="
[keystone_authtoken]
www_authenticate_uri = $ks_url
auth_url = $ks_url
auth_type = password
username = $ks_user
password = ${ks_password//\$/\$\$}
project_name = $ks_project
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne"
  fi

  # The neutron interface plugs and unplugs Neutron ports (VIF attach and detach, binding on an active node) as this
  # service user; cleaning and provisioning need their networks to exist (gotcha 5) even though fake deploy and
  # fake cleaning never plug a port into them.
  local network_interfaces=noop neutron_section=""
  if [[ -n $neutron_network ]]; then
    [[ $ks_password != *$'\n'* ]] || die '--keystone-password must be one line'
    network_interfaces=noop,flat,neutron
    neutron_section="
[neutron]
auth_type = password
auth_url = $ks_url
username = $ks_user
password = ${ks_password//\$/\$\$}
project_name = $ks_project
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne
valid_interfaces = $neutron_interface${neutron_url:+
endpoint_override = $neutron_url}
cleaning_network = $neutron_network
provisioning_network = $neutron_network"
  fi

  local fake_section=""
  if [[ -n $fake_delays ]]; then
    fake_section=$'\n[fake]'
    local item
    # Values may be "min,max": split only on commas that start a new "name=".
    while IFS= read -r item; do
      [[ -n $item ]] || continue
      [[ $item =~ ^[a-z_]+_delay=[0-9.]+(,[0-9.]+)?$ ]] || die "bad --fake-delays entry '$item' (name_delay=SECONDS or name_delay=MIN,MAX)"
      fake_section+=$'\n'"${item%%=*} = ${item#*=}"
    done < <(printf '%s\n' "$fake_delays" | sed -E 's/,([a-z_]+_delay=)/\n\1/g')
  fi

  cat >"$conf" <<EOF
# Written by scripts/ironic-standalone.sh: do not edit, it is rewritten on every start.
[DEFAULT]
$auth_lines
rpc_transport = none
host = localhost
log_dir = $data/log
tempdir = $data/tmp
minimum_memory_warning_only = true
graceful_shutdown_timeout = 10
enabled_hardware_types = fake-hardware
enabled_bios_interfaces = fake,no-bios
enabled_boot_interfaces = fake
enabled_console_interfaces = fake,no-console,ipmitool-socat
enabled_deploy_interfaces = fake
enabled_inspect_interfaces = fake,no-inspect
enabled_management_interfaces = fake
enabled_network_interfaces = $network_interfaces
enabled_power_interfaces = fake
enabled_raid_interfaces = fake,no-raid
enabled_rescue_interfaces = fake,no-rescue
enabled_storage_interfaces = fake,noop
enabled_vendor_interfaces = fake,no-vendor
default_network_interface = noop
default_storage_interface = noop

[api]
host_ip = 127.0.0.1
port = $port
api_workers = 1
project_admin_can_manage_own_nodes = false

[conductor]
automated_clean = true

[console]
socat_address = 127.0.0.1
port_range = $console_ports
terminal_pid_dir = $data/console-pids

[database]
connection = sqlite:///$data/ironic.db

[dhcp]
dhcp_provider = none

[oslo_concurrency]
lock_path = $data/lock

[oslo_policy]
policy_file = $data/etc/policy.yaml
policy_dirs = $data/etc/policy.d
$fake_section
$keystone_section
$neutron_section
EOF
  # Under --auth keystone or with --neutron-network ironic.conf holds the service user's password.
  if [[ $auth == keystone || -n $neutron_network ]]; then chmod 600 "$conf"; fi

  if [[ ! -s $data/ironic.db ]]; then
    log "creating schema"
    /usr/bin/ironic-dbsync --config-file "$conf" create_schema >>"$data/log/dbsync.log" 2>&1 ||
      { tail -n 40 "$data/log/dbsync.log" >&2; die "ironic-dbsync create_schema failed"; }
  fi

  local url="http://127.0.0.1:$port"
  # Refuse to start on a port somebody else answers on (e.g. a packaged ironic-api on 6385).
  if [[ "$(http_probe "$url/" /dev/null)" != 000 ]]; then
    die "port $port is already answering HTTP: another Ironic? pick --port"
  fi

  # setsid: its own session, so a terminal's Ctrl-C or the caller's process group does not reach it.
  setsid /usr/bin/ironic --config-file "$conf" </dev/null >>"$data/log/ironic.stdout.log" 2>&1 &
  local pid=$!
  echo "$pid" >"$data/ironic.pid"
  echo "$url" >"$data/endpoint"
  echo "$auth" >"$data/auth"

  local curl_auth=()
  [[ $auth == http_basic ]] && curl_auth=(-u "$user:$password")
  [[ $auth == keystone ]] && curl_auth=(-H "X-Auth-Token: $probe_token")
  local deadline=$((SECONDS + timeout)) body=$data/tmp/drivers.json code
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "ironic (pid $pid) exited during start; log tail:"
      tail_logs "$data"
      rm -f "$data/ironic.pid"
      exit 1
    fi
    code=$(http_probe "$url/v1/drivers" "$body" "${curl_auth[@]}")
    if [[ $code == 200 ]] && grep -q '"fake-hardware"' "$body"; then break; fi
    if ((SECONDS >= deadline)); then
      log "ironic did not list fake-hardware in ${timeout}s (last HTTP $code); log tail:"
      tail_logs "$data"
      stop_data_dir "$data"
      exit 1
    fi
    sleep 0.2
  done
  log "ironic up (pid $pid, auth $auth, consoles $console_ports, data $data)"
  echo "$url"
}

# Prints a project-scoped token for USER in PROJECT (Default domain) from the Keystone v3 root URL; the password
# goes through the environment, not a command line. Debian's Python, standard library only.
keystone_token() {
  KS_URL=$1 KS_USER=$2 KS_PASSWORD=$3 KS_PROJECT=$4 "$PY" -I - <<'PYEOF'
import json, os, sys, urllib.error, urllib.request
body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
    "name": os.environ["KS_USER"], "password": os.environ["KS_PASSWORD"], "domain": {"name": "Default"}}}},
    "scope": {"project": {"name": os.environ["KS_PROJECT"], "domain": {"name": "Default"}}}}}
req = urllib.request.Request(os.environ["KS_URL"] + "/auth/tokens", data=json.dumps(body).encode(),
                             headers={"Content-Type": "application/json"}, method="POST")
try:
    with urllib.request.urlopen(req, timeout=30) as res:
        print(res.headers["X-Subject-Token"])
except urllib.error.HTTPError as e:
    sys.exit(f"[ironic-standalone] Keystone answered {e.code} to {os.environ['KS_USER']}'s password: {e.read()[:300]!r}")
except OSError as e:
    sys.exit(f"[ironic-standalone] Keystone at {os.environ['KS_URL']} unreachable: {e}")
PYEOF
}

tail_logs() {
  local data=$1 f
  for f in "$data"/log/*.log; do
    [[ -s $f ]] || continue
    echo "---- $f" >&2
    tail -n 40 "$f" >&2
  done
}

# ---------------------------------------------------------------------------------------------------- stop
# socat processes serving this data dir's consoles: pid files Ironic wrote, Ironic's own children, and any
# orphaned socat listening on this data dir's console port range.
console_socat_pids() {
  local data=$1 ironic_pid=${2:-} f pid
  {
    for f in "$data"/console-pids/*.pid "$data"/tmp/*.pid; do
      [[ -e $f ]] || continue
      pid=$(read_pid "$f") || continue
      is_socat "$pid" && echo "$pid"
    done
    if [[ -n $ironic_pid ]]; then
      pgrep -P "$ironic_pid" -x socat || true
    fi
    local range lo hi args p
    range=$(cat "$data/console-ports" 2>/dev/null || true)
    if [[ $range =~ ^([0-9]+):([0-9]+)$ ]]; then
      lo=${BASH_REMATCH[1]} hi=${BASH_REMATCH[2]}
      for pid in $(pgrep -x socat || true); do
        # Only orphans (re-parented to init) whose listen port lies in our range and that run ipmitool.
        [[ "$(ps -o ppid= -p "$pid" 2>/dev/null | tr -d ' ')" == 1 ]] || continue
        args=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)
        [[ $args == *ipmitool* ]] || continue
        if [[ $args =~ TCP4?-LISTEN:([0-9]+) ]]; then
          p=${BASH_REMATCH[1]}
          ((p >= lo && p <= hi)) && echo "$pid"
        fi
      done
    fi
  } | sort -u
}

stop_data_dir() {
  local data=$1 conf=$1/ironic.conf pid="" socats
  if pid=$(read_pid "$data/ironic.pid") && is_our_ironic "$pid" "$conf"; then :; else pid=""; fi
  socats=$(console_socat_pids "$data" "$pid")
  if [[ -n $pid ]]; then
    kill -TERM "$pid" 2>/dev/null || true
    local i
    for ((i = 0; i < 100; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "ironic (pid $pid) still running after 10 s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    log "ironic (pid $pid) stopped"
  else
    log "ironic not running for $data"
  fi
  # Ironic may have started more consoles before it stopped; look again.
  socats=$(printf '%s\n%s\n' "$socats" "$(console_socat_pids "$data")" | grep -E '^[0-9]+$' | sort -u || true)
  local s
  for s in $socats; do
    is_socat "$s" || continue
    log "stopping console socat pid $s"
    kill -TERM "$s" 2>/dev/null || true
  done
  sleep 0.2
  for s in $socats; do is_socat "$s" && kill -KILL "$s" 2>/dev/null || true; done
  rm -f "$data/ironic.pid"
}

cmd_stop() {
  [[ $# -eq 1 ]] || usage
  [[ -d $1 ]] || die "no such data dir $1"
  stop_data_dir "$(cd "$1" && pwd)"
}

cmd_status() {
  [[ $# -eq 1 ]] || usage
  [[ -d $1 ]] || { echo "stopped"; exit 3; }
  local data pid
  data=$(cd "$1" && pwd)
  if pid=$(read_pid "$data/ironic.pid") && is_our_ironic "$pid" "$data/ironic.conf"; then
    echo "running pid=$pid url=$(cat "$data/endpoint" 2>/dev/null) auth=$(cat "$data/auth" 2>/dev/null)"
  else
    echo "stopped"
    exit 3
  fi
}

[[ $# -ge 1 ]] || usage
command=$1
shift
case $command in
  install) cmd_install "$@" ;;
  start) cmd_start "$@" ;;
  stop) cmd_stop "$@" ;;
  status) cmd_status "$@" ;;
  -h | --help | help) usage ;;
  *) log "unknown command $command"; usage ;;
esac
