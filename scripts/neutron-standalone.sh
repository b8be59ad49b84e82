#!/usr/bin/env bash
# Starts and stops a real OpenStack Neutron (Debian 12's `neutron-server`, Zed) and the ML2 `baremetal` mechanism
# driver's ironic-neutron-agent (Debian's `ironic-neutron-agent`, source networking-baremetal) for end-to-end tests:
# Keystone auth, a MariaDB database and a RabbitMQ vhost of its own per data dir. Facts behind every setting:
# shared/notes/openstack-lab.md (sections 5 and 6).
#
#   scripts/neutron-standalone.sh install
#   scripts/neutron-standalone.sh start DATA_DIR --port N --keystone-url URL [--keystone-user neutron]
#                                       [--keystone-project service] [--vlan-ranges physnet1:100:199]
#                                       [--flat-networks provnet] [--no-trunk] [--report-interval 2]
#                                       [--db-host 127.0.0.1 --db-port 3306 --db-user root]
#                                       [--rabbit-host 127.0.0.1 --rabbit-port 5672 --rabbit-user guest]
#                                       [--schema-cache DIR] [--timeout S]
#   scripts/neutron-standalone.sh start-agent DATA_DIR [--ironic-url URL] [--timeout S]
#   scripts/neutron-standalone.sh stop DATA_DIR [--drop-db]
#   scripts/neutron-standalone.sh status DATA_DIR
#
# Secrets come from the environment, never the command line: NEUTRON_KEYSTONE_PASSWORD (the service user's; it needs
# admin and service on project `service`, created beforehand), NEUTRON_DB_PASSWORD (default empty),
# NEUTRON_RABBIT_PASSWORD (default guest).
# `start` runs neutron-server: ML2 with type drivers flat,vlan, project networks `vlan` from --vlan-ranges, flat
# provider networks on --flat-networks, mechanism driver `baremetal`, extension driver port_security, the `trunk`
# service plugin (unless --no-trunk; see Trunks below), one API and one RPC worker, no Nova notifications. A fresh
# DATA_DIR gets a fresh database (dropped and recreated, then `neutron-db-manage upgrade heads`); the RabbitMQ vhost
# is created at every start and deleted at every stop, so the shared broker keeps none of Neutron's queues and
# exchanges (lab notes, gotcha 8). It prints the endpoint (http://127.0.0.1:PORT) as its last stdout line once an
# authenticated GET /v2.0/networks answers 200 and the RPC workers consume their queues.
# --schema-cache DIR: the first fresh start dumps the migrated schema (mysqldump) to DIR, keyed by the python3-neutron
# version; later fresh starts load that dump (189 tables) instead of running the 126 migrations again.
# `start-agent` (after Ironic is up: it lists Ironic's ports at start) runs ironic-neutron-agent as the same service
# user, over the same vhost, reporting every --report-interval seconds (default 2; the packaged 30 s keeps a new node
# unbindable for up to a minute: gotcha 7). Ironic is found in the catalog (type baremetal, public) or at --ironic-url.
# `stop` stops both (process groups: neutron-server's workers and all), deletes the vhost and keeps the database, so
# `start` on the same DATA_DIR resumes the same Neutron; --drop-db drops it too (do that before removing DATA_DIR).
# The database and vhost names derive from DATA_DIR's path: parallel instances on other data dirs and ports never
# share one. Everything but the URL goes to stderr. Exit codes: 0 ok; 1 failure; 2 usage; `status` exits 3 when
# neutron-server is not running.
#
# Trunks work as far as Neutron's API goes, not further. With `service_plugins = trunk` and `mechanism_drivers =
# baremetal` neutron-server refuses to start ("IncompatibleTrunkPluginConfiguration: Cannot load trunk plugin: no
# compatible core plugin configuration is found"): the plugin needs a trunk driver for a configured mechanism
# driver, Neutron ships them only for openvswitch, linuxbridge and ovn, and networking-baremetal 6.0 registers none.
# So the script lists `openvswitch` after `baremetal`: that loads the OVS trunk driver and binds nothing here (no Open
# vSwitch agent ever reports). Then a project member creates a trunk with VLAN-tagged subports (201, status DOWN) and
# its parent port, attached to an active node, binds like any port (ACTIVE, vif_type other, trunk_details listed);
# but the subports stay DOWN and unbound and the trunk DOWN for good: Ironic 21.4 has no trunk code, no driver here
# reports a trunk's state, and nothing programs a switch (Debian has no networking-generic-switch). --no-trunk
# leaves the plugin out and `baremetal` alone.
#
# Measured on a 2-core Debian 12 machine (2026-11), under a load average of 5-7 (other engineers' test suites; the
# figures on an idle machine are lower):
#   install      18 s: 29 packages (neutron-server, ironic-neutron-agent and their dependencies, 35 MiB installed),
#                after Ironic's packages; 0.1 s when installed
#   start        fresh DATA_DIR: 18 s at load 5 (database: migrations 9 s; API until 200: 7 s; RPC consumers 1.6 s),
#                40 s at load 7 beside an Ironic starting; with --schema-cache filled: 13-18 s (the dump loads in
#                3-6 s instead of 9-31 s of migrations)
#   start-agent  3.5-4.8 s (Python imports); the agent reports a node ≤ 2 report intervals after its Ironic port exists
#   stop         4.3 s with the agent and --drop-db (neutron-server 2-3 s, vhost and database side by side 1-2 s)
#   memory       neutron-server ≈ 237 MiB PSS (parent 52, API worker 82, RPC worker 56, periodic worker 48; ≈ 620 MiB
#                summed RSS); ironic-neutron-agent ≈ 121 MiB PSS. With Keystone (135) and Ironic (123): ≈ 620 MiB PSS
set -euo pipefail

# Debian's interpreter: the python3 on PATH may be pyenv's, without Neutron's modules.
PY=/usr/bin/python3
PACKAGES=(neutron-server ironic-neutron-agent)
REQUIRED=(/usr/bin/neutron-server /usr/bin/neutron-db-manage /usr/bin/ironic-neutron-agent)

log() { printf '[neutron-standalone] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
usage() { sed -n '7,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# Keep pyenv's or a caller's Python settings out of Debian's Python.
unset PYTHONPATH PYTHONHOME PYTHONSTARTUP

# shellcheck source=lib/debian-packages.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-packages.sh"

# ---------------------------------------------------------------------------------------------------- install
cmd_install() {
  install_missing_packages || return 0
  local svc
  for svc in neutron-api neutron-rpc-server ironic-neutron-agent; do stop_packaged_service "$svc"; done
  all_binaries || die "missing after install: ${REQUIRED[*]}"
  log "installed"
}

# ---------------------------------------------------------------------------------------------------- helpers
# shellcheck source=lib/pid-files.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/pid-files.sh"

# Is PID alive and started with CONF? Neutron's workers keep the original command line in their process title
# ("neutron-server: api worker (/usr/bin/python3 /usr/bin/neutron-server --config-file …)").
is_ours() {
  local pid=$1 conf=$2
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$conf"
}

# Every process still in process group PGID (the leader ran under setsid: its group is its session).
group_pids() { pgrep -g "$1" 2>/dev/null || true; }

http_code() {
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" 2>/dev/null) || true
  echo "${code:-000}"
}

tail_logs() {
  local data=$1 f
  for f in "$data"/log/*.log; do
    [[ -s $f ]] || continue
    echo "---- $f" >&2
    tail -n 40 "$f" >&2
  done
}

# Names of this data dir's database and vhost: a hash of its path (parallel data dirs never share one).
instance_key() { printf '%s' "$1" | sha256sum | cut -c1-12; }

mysql_do() {
  local data=$1
  shift
  MYSQL_PWD=${NEUTRON_DB_PASSWORD:-} mysql --protocol=tcp -h "$(cat "$data/db-host")" -P "$(cat "$data/db-port")" \
    -u "$(cat "$data/db-user")" --batch --skip-column-names "$@"
}

rabbitmqctl_q() { timeout 60 rabbitmqctl -q "$@"; }

# Prints a project-scoped token for the service user (Default domain); the password goes through the environment.
keystone_token() {
  KS_URL=$1 KS_USER=$2 KS_PROJECT=$3 "$PY" -I - <<'PYEOF'
import json, os, sys, urllib.error, urllib.request
body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
    "name": os.environ["KS_USER"], "password": os.environ["NEUTRON_KEYSTONE_PASSWORD"], "domain": {"name": "Default"}}}},
    "scope": {"project": {"name": os.environ["KS_PROJECT"], "domain": {"name": "Default"}}}}}
req = urllib.request.Request(os.environ["KS_URL"] + "/auth/tokens", data=json.dumps(body).encode(),
                             headers={"Content-Type": "application/json"}, method="POST")
try:
    with urllib.request.urlopen(req, timeout=30) as res:
        print(res.headers["X-Subject-Token"])
except urllib.error.HTTPError as e:
    sys.exit(f"[neutron-standalone] Keystone answered {e.code} to {os.environ['KS_USER']}'s password: {e.read()[:300]!r}")
except OSError as e:
    sys.exit(f"[neutron-standalone] Keystone at {os.environ['KS_URL']} unreachable: {e}")
PYEOF
}

# oslo.config reads "$" as a variable reference: double it in passwords.
ini_escape() { printf '%s' "${1//\$/\$\$}"; }

# Percent-encodes a URL component (user, password, vhost in transport_url).
url_escape() { "$PY" -I -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

# ---------------------------------------------------------------------------------------------------- start
write_neutron_conf() {
  local data=$1 port=$2 ks_url=$3 ks_user=$4 ks_project=$5 vlan_ranges=$6 flat_networks=$7 trunk=$8 report=$9
  local transport=${10} db_url=${11} ks_password=${12}
  local service_plugins="" mech=baremetal
  if [[ $trunk == 1 ]]; then
    service_plugins=trunk
    # See "Trunks" in the header: the trunk plugin refuses to load unless a mechanism driver it has a trunk driver
    # for is configured, and networking-baremetal 6.0 registers none. openvswitch after baremetal binds nothing
    # here (no Open vSwitch agent reports), but loads the OVS trunk driver.
    mech=baremetal,openvswitch
  fi
  (
    umask 077
    cat >"$data/neutron.conf" <<EOF
# Written by scripts/neutron-standalone.sh: do not edit, it is rewritten on every start.
[DEFAULT]
core_plugin = ml2
service_plugins = $service_plugins
auth_strategy = keystone
bind_host = 127.0.0.1
bind_port = $port
api_workers = 1
rpc_workers = 1
rpc_state_report_workers = 0
# One API worker serves at most wsgi_default_pool_size (100) connections at once, and an idle keep-alive connection
# holds its slot for client_socket_timeout (900 s). Ironic opens a new connection for nearly every call it makes to
# Neutron (a new client per VIF attach, per cleaning-network lookup) and keeps each alive, so after a few minutes of
# VIF work every slot was taken and the next request waited, unanswered, until Ironic's own timeout (seen: VIF
# attaches hanging 30 s in the middle of a suite). Closing each connection after its answer frees the slot at once.
wsgi_keep_alive = false
client_socket_timeout = 30
transport_url = $transport
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
log_dir = $data/log
log_file = neutron-server.log
use_stderr = false
state_path = $data/state
# No DHCP agent runs here: nothing to notify when a port or subnet changes.
dhcp_agent_notification = false

[database]
connection = $db_url

[keystone_authtoken]
www_authenticate_uri = $ks_url
auth_url = $ks_url
auth_type = password
username = $ks_user
password = $(ini_escape "$ks_password")
project_name = $ks_project
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne

[oslo_concurrency]
lock_path = $data/lock

[oslo_messaging_rabbit]
# The vhost goes away at stop: nothing needs to survive a broker restart.
amqp_durable_queues = false

[AGENT]
report_interval = $report

[ml2]
type_drivers = flat,vlan
tenant_network_types = vlan
mechanism_drivers = $mech
extension_drivers = port_security

[ml2_type_flat]
flat_networks = $flat_networks

[ml2_type_vlan]
network_vlan_ranges = $vlan_ranges,$flat_networks
EOF
  )
}

cmd_start() {
  [[ $# -ge 1 ]] || usage
  local data
  data=$(abs_dir "$1")
  shift
  local port="" ks_url="" ks_user=neutron ks_project=service vlan_ranges=physnet1:100:199 flat_networks=provnet
  local trunk=1 report=2 timeout=120 db_host=127.0.0.1 db_port=3306 db_user=root
  local rabbit_host=127.0.0.1 rabbit_port=5672 rabbit_user=guest schema_cache=""
  while [[ $# -gt 0 ]]; do
    case $1 in
      --port) port=${2:?}; shift 2 ;;
      --keystone-url) ks_url=${2:?}; shift 2 ;;
      --keystone-user) ks_user=${2:?}; shift 2 ;;
      --keystone-project) ks_project=${2:?}; shift 2 ;;
      --vlan-ranges) vlan_ranges=${2:?}; shift 2 ;;
      --flat-networks) flat_networks=${2:?}; shift 2 ;;
      --no-trunk) trunk=0; shift ;;
      --report-interval) report=${2:?}; shift 2 ;;
      --db-host) db_host=${2:?}; shift 2 ;;
      --db-port) db_port=${2:?}; shift 2 ;;
      --db-user) db_user=${2:?}; shift 2 ;;
      --rabbit-host) rabbit_host=${2:?}; shift 2 ;;
      --rabbit-port) rabbit_port=${2:?}; shift 2 ;;
      --rabbit-user) rabbit_user=${2:?}; shift 2 ;;
      --schema-cache) schema_cache=${2:?}; shift 2 ;;
      --timeout) timeout=${2:?}; shift 2 ;;
      *) log "unknown option $1"; usage ;;
    esac
  done
  [[ $port =~ ^[0-9]+$ ]] || die "--port N is required"
  [[ $ks_url =~ ^https?://[^[:space:]]+$ ]] || die "--keystone-url URL (the v3 root, e.g. http://127.0.0.1:5000/v3) is required"
  ks_url=${ks_url%/}
  [[ -n ${NEUTRON_KEYSTONE_PASSWORD:-} ]] || die "NEUTRON_KEYSTONE_PASSWORD (the service user's password) is not set"
  [[ $NEUTRON_KEYSTONE_PASSWORD != *$'\n'* ]] || die 'NEUTRON_KEYSTONE_PASSWORD must be one line'
  [[ $vlan_ranges =~ ^[A-Za-z0-9_-]+(:[0-9]+:[0-9]+)?(,[A-Za-z0-9_-]+(:[0-9]+:[0-9]+)?)*$ ]] || die "bad --vlan-ranges $vlan_ranges"
  [[ $flat_networks =~ ^[A-Za-z0-9_-]+(,[A-Za-z0-9_-]+)*$ ]] || die "bad --flat-networks $flat_networks"
  [[ $report =~ ^[0-9]+$ ]] && ((report >= 1)) || die "bad --report-interval $report"
  [[ $timeout =~ ^[0-9]+$ ]] || die "bad --timeout $timeout"
  all_binaries || die "Neutron is not installed: run '$0 install' first"
  command -v mysql >/dev/null || die "no mysql client (Debian's mariadb-client)"
  command -v rabbitmqctl >/dev/null || die "no rabbitmqctl: the vhost is made on the local RabbitMQ"

  local conf=$data/neutron.conf pid
  if pid=$(read_pid "$data/neutron.pid") && is_ours "$pid" "$conf"; then
    die "already running (pid $pid) for $data: stop it first"
  fi
  local url="http://127.0.0.1:$port"
  if [[ "$(http_code "$url/")" != 000 ]]; then die "port $port is already answering HTTP: pick --port"; fi

  # Wrong credentials or a Keystone that is down fail here, before anything starts; the token is also the
  # readiness probe's (every unauthenticated call is 401 long before the plugin is loaded).
  local token
  token=$(keystone_token "$ks_url" "$ks_user" "$ks_project") || die "no token from $ks_url for $ks_user in project $ks_project"

  mkdir -p "$data/log" "$data/lock" "$data/state"
  chmod 700 "$data"
  local key
  key=$(instance_key "$data")
  local db_name="leasehold_neutron_$key" vhost="leasehold-neutron-$key"
  echo "$db_host" >"$data/db-host"
  echo "$db_port" >"$data/db-port"
  echo "$db_user" >"$data/db-user"
  echo "$db_name" >"$data/db-name"
  echo "$vhost" >"$data/vhost"
  echo "$ks_url" >"$data/keystone-url"
  echo "$ks_user" >"$data/keystone-user"
  echo "$ks_project" >"$data/keystone-project"
  echo "$report" >"$data/report-interval"
  local db_url transport
  db_url="mysql+pymysql://$(url_escape "$db_user"):$(url_escape "${NEUTRON_DB_PASSWORD:-}")@$db_host:$db_port/$db_name?charset=utf8"
  transport="rabbit://$(url_escape "$rabbit_user"):$(url_escape "${NEUTRON_RABBIT_PASSWORD:-guest}")@$rabbit_host:$rabbit_port/$(url_escape "$vhost")"
  echo "$transport" >"$data/transport-url" && chmod 600 "$data/transport-url"
  write_neutron_conf "$data" "$port" "$ks_url" "$ks_user" "$ks_project" "$vlan_ranges" "$flat_networks" "$trunk" \
    "$report" "$transport" "$db_url" "$NEUTRON_KEYSTONE_PASSWORD"

  local t0=$SECONDS
  # The vhost (≈ 1.5 s of rabbitmqctl) beside the schema (≈ 8 s of neutron-db-manage). A vhost left by a killed
  # instance of this data dir is deleted first: its queues would hold messages for processes that are gone.
  (
    rabbitmqctl_q delete_vhost "$vhost" >/dev/null 2>&1 || true
    rabbitmqctl_q add_vhost "$vhost" >&2 &&
      rabbitmqctl_q set_permissions -p "$vhost" "$rabbit_user" '.*' '.*' '.*' >&2
  ) &
  local vhost_job=$!
  if [[ ! -e $data/db-ready ]]; then
    mysql_do "$data" -e "DROP DATABASE IF EXISTS \`$db_name\`; CREATE DATABASE \`$db_name\` CHARACTER SET utf8mb4;" ||
      { wait "$vhost_job" || true; die "cannot create database $db_name on $db_host:$db_port"; }
    local dump=""
    if [[ -n $schema_cache ]]; then
      mkdir -p "$schema_cache"
      dump=$schema_cache/neutron-$(dpkg-query -W -f='${Version}' python3-neutron | tr -c 'A-Za-z0-9.+\n-' _).sql
    fi
    if [[ -n $dump && -s $dump ]]; then
      log "creating database $db_name from the schema dump $dump"
      mysql_do "$data" "$db_name" <"$dump" || { wait "$vhost_job" || true; die "loading $dump into $db_name failed"; }
    else
      log "creating database $db_name and its schema (neutron-db-manage upgrade heads)"
      if ! /usr/bin/neutron-db-manage --config-file "$conf" upgrade heads >>"$data/log/db-manage.log" 2>&1; then
        wait "$vhost_job" || true
        tail -n 40 "$data/log/db-manage.log" >&2
        die "neutron-db-manage upgrade heads failed"
      fi
      if [[ -n $dump ]]; then
        # Written aside and renamed: a parallel start never reads half a dump.
        MYSQL_PWD=${NEUTRON_DB_PASSWORD:-} mysqldump --protocol=tcp -h "$db_host" -P "$db_port" -u "$db_user" \
          --skip-comments --routines --triggers "$db_name" >"$dump.$$" && mv -f "$dump.$$" "$dump" || rm -f "$dump.$$"
      fi
    fi
    : >"$data/db-ready"
  fi
  wait "$vhost_job" || die "cannot create RabbitMQ vhost $vhost (is RabbitMQ running at $rabbit_host:$rabbit_port?)"
  log "database and vhost ready in $((SECONDS - t0)) s"

  rm -f "$data/neutron.pid"
  # setsid: its own session and process group (stop signals the group: the API, RPC and periodic workers).
  setsid /usr/bin/neutron-server --config-file "$conf" </dev/null >>"$data/log/neutron-server.stdout.log" 2>&1 &
  pid=$!
  echo "$pid" >"$data/neutron.pid"
  echo "$url" >"$data/endpoint"

  local deadline=$((SECONDS + timeout)) code
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "neutron-server (pid $pid) exited during start; log tail:"
      tail_logs "$data"
      stop_data_dir "$data"
      exit 1
    fi
    code=$(http_code -H "X-Auth-Token: $token" "$url/v2.0/networks")
    [[ $code == 200 ]] && break
    if ((SECONDS >= deadline)); then
      log "GET $url/v2.0/networks did not answer 200 in ${timeout}s (last HTTP $code); log tail:"
      tail_logs "$data"
      stop_data_dir "$data"
      exit 1
    fi
    sleep 0.3
  done
  log "API up after $((SECONDS - t0)) s"
  # The API answers before the RPC worker consumes: an agent reporting before then has its first reports lost.
  local consumers
  while :; do
    consumers=$(rabbitmqctl_q list_queues -p "$vhost" name consumers 2>/dev/null | awk '$1 == "q-reports-plugin" {print $2}')
    [[ ${consumers:-0} -ge 1 ]] && break
    if ((SECONDS >= deadline)); then
      log "no consumer on q-reports-plugin in vhost $vhost after ${timeout}s; log tail:"
      tail_logs "$data"
      stop_data_dir "$data"
      exit 1
    fi
    sleep 0.5
  done
  log "neutron up (pid $pid, data $data, database $db_name, vhost $vhost) in $((SECONDS - t0)) s"
  echo "$url"
}

# ---------------------------------------------------------------------------------------------------- agent
cmd_start_agent() {
  [[ $# -ge 1 ]] || usage
  [[ -d $1 ]] || die "no such data dir $1"
  local data
  data=$(cd "$1" && pwd)
  shift
  local ironic_url="" timeout=60
  while [[ $# -gt 0 ]]; do
    case $1 in
      --ironic-url) ironic_url=${2:?}; shift 2 ;;
      --timeout) timeout=${2:?}; shift 2 ;;
      *) log "unknown option $1"; usage ;;
    esac
  done
  [[ $timeout =~ ^[0-9]+$ ]] || die "bad --timeout $timeout"
  [[ -z $ironic_url || $ironic_url =~ ^https?://[^[:space:]]+$ ]] || die "bad --ironic-url $ironic_url"
  local pid
  pid=$(read_pid "$data/neutron.pid") && is_ours "$pid" "$data/neutron.conf" || die "neutron-server is not running for $data: start it first"
  local agent_conf=$data/agent.conf
  if pid=$(read_pid "$data/agent.pid") && is_ours "$pid" "$agent_conf"; then
    die "the agent is already running (pid $pid) for $data"
  fi
  # The agent authenticates to Ironic as Neutron's service user: its credentials are in neutron.conf already.
  local ks_password
  ks_password=$(sed -n '/^\[keystone_authtoken\]/,/^\[/s/^password = //p' "$data/neutron.conf")
  (
    umask 077
    cat >"$agent_conf" <<EOF
# Written by scripts/neutron-standalone.sh: do not edit, it is rewritten on every start-agent.
[DEFAULT]
transport_url = $(cat "$data/transport-url")
log_dir = $data/log
log_file = ironic-neutron-agent.log
use_stderr = false

[AGENT]
report_interval = $(cat "$data/report-interval")

[oslo_concurrency]
lock_path = $data/lock

[ironic]
auth_type = password
auth_url = $(cat "$data/keystone-url")
username = $(cat "$data/keystone-user")
password = $ks_password
project_name = $(cat "$data/keystone-project")
user_domain_name = Default
project_domain_name = Default
region_name = RegionOne
valid_interfaces = public
${ironic_url:+endpoint_override = $ironic_url}
EOF
  )
  local log_file=$data/log/ironic-neutron-agent.log
  local before=0
  [[ -e $log_file ]] && before=$(wc -l <"$log_file")
  local t0=$SECONDS
  setsid /usr/bin/ironic-neutron-agent --config-file "$agent_conf" </dev/null >>"$data/log/ironic-neutron-agent.stdout.log" 2>&1 &
  pid=$!
  echo "$pid" >"$data/agent.pid"
  # Ready when it has its Ironic client and has started its listeners and heartbeats (it logs both).
  local deadline=$((SECONDS + timeout))
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "ironic-neutron-agent (pid $pid) exited during start; log tail:"
      tail_logs "$data"
      rm -f "$data/agent.pid"
      exit 1
    fi
    if [[ -e $log_file ]] && tail -n "+$((before + 1))" "$log_file" | grep -q 'Starting agent networking-baremetal'; then break; fi
    if ((SECONDS >= deadline)); then
      log "ironic-neutron-agent did not start in ${timeout}s; log tail:"
      tail_logs "$data"
      stop_group "$data/agent.pid" "$agent_conf" ironic-neutron-agent
      exit 1
    fi
    sleep 0.2
  done
  log "ironic-neutron-agent up (pid $pid) in $((SECONDS - t0)) s"
}

# ---------------------------------------------------------------------------------------------------- stop
# SIGTERM to the process group of PIDFILE's process (if it is ours), SIGKILL to what is left after 15 s.
stop_group() {
  local pidfile=$1 conf=$2 what=$3 pid i left
  if ! pid=$(read_pid "$pidfile"); then
    log "$what not running"
    return 0
  fi
  # The leader may be gone while workers of its group live on: the group is ours if any member runs our config.
  local ours=0 p
  for p in $(group_pids "$pid"); do is_ours "$p" "$conf" && ours=1; done
  if [[ $ours -eq 0 ]]; then
    log "$what not running"
    rm -f "$pidfile"
    return 0
  fi
  kill -TERM -- "-$pid" 2>/dev/null || true
  for ((i = 0; i < 150; i++)); do
    left=$(group_pids "$pid")
    [[ -n $left ]] || break
    sleep 0.1
  done
  left=$(group_pids "$pid")
  if [[ -n $left ]]; then
    log "$what (group $pid) still running after 15 s: SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  log "$what (pid $pid) stopped"
  rm -f "$pidfile"
}

stop_data_dir() {
  local data=$1 drop_db=${2:-0}
  # Side by side: each takes 2-5 s to wind down its listeners and workers after SIGTERM.
  stop_group "$data/agent.pid" "$data/agent.conf" ironic-neutron-agent &
  local agent_job=$!
  stop_group "$data/neutron.pid" "$data/neutron.conf" neutron-server
  wait "$agent_job" || true
  # The vhost (≈ 1-1.5 s of rabbitmqctl) and the database (≈ 1-2 s for ≈ 180 tables) go side by side.
  local vhost vhost_job=""
  vhost=$(cat "$data/vhost" 2>/dev/null || true)
  if [[ -n $vhost ]] && command -v rabbitmqctl >/dev/null; then
    (
      local out
      if out=$(rabbitmqctl_q delete_vhost "$vhost" 2>&1); then
        log "vhost $vhost deleted"
      elif [[ $out == *"does not exist"* || $out == *no_such_vhost* ]]; then
        :
      else
        log "could not delete vhost $vhost: $out"
      fi
    ) &
    vhost_job=$!
  fi
  if [[ $drop_db -eq 1 && -s $data/db-name ]]; then
    local db_name
    db_name=$(cat "$data/db-name")
    mysql_do "$data" -e "DROP DATABASE IF EXISTS \`$db_name\`" && log "database $db_name dropped" || log "could not drop database $db_name"
    rm -f "$data/db-ready"
  fi
  [[ -z $vhost_job ]] || wait "$vhost_job" || true
}

cmd_stop() {
  [[ $# -ge 1 ]] || usage
  [[ -d $1 ]] || die "no such data dir $1"
  local data drop_db=0
  data=$(cd "$1" && pwd)
  shift
  while [[ $# -gt 0 ]]; do
    case $1 in
      --drop-db) drop_db=1; shift ;;
      *) log "unknown option $1"; usage ;;
    esac
  done
  stop_data_dir "$data" "$drop_db"
}

cmd_status() {
  [[ $# -eq 1 ]] || usage
  [[ -d $1 ]] || { echo "stopped"; exit 3; }
  local data pid agent="stopped" apid
  data=$(cd "$1" && pwd)
  if apid=$(read_pid "$data/agent.pid") && is_ours "$apid" "$data/agent.conf"; then agent="running pid=$apid"; fi
  if pid=$(read_pid "$data/neutron.pid") && is_ours "$pid" "$data/neutron.conf"; then
    echo "running pid=$pid url=$(cat "$data/endpoint" 2>/dev/null) agent=$agent"
  else
    echo "stopped agent=$agent"
    exit 3
  fi
}

[[ $# -ge 1 ]] || usage
command=$1
shift
case $command in
  install) cmd_install "$@" ;;
  start) cmd_start "$@" ;;
  start-agent) cmd_start_agent "$@" ;;
  stop) cmd_stop "$@" ;;
  status) cmd_status "$@" ;;
  -h | --help | help) usage ;;
  *) log "unknown command $command"; usage ;;
esac
